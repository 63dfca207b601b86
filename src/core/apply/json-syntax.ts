// Where a .json document stops being JSON: JSON.parse says what is wrong but, in Bun, not where, and a problem is
// told at its file and line.

/** What is wrong with `text` as JSON, at which character; null when it is JSON. */
export function jsonSyntaxError(text: string): { offset: number; message: string } | null {
  try {
    JSON.parse(text);
    return null;
  } catch (e) {
    return locate(text) ?? { offset: 0, message: (e as Error).message };
  }
}

class Stop extends Error {
  constructor(
    readonly offset: number,
    message: string,
  ) {
    super(message);
  }
}

const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** The first place a strict reading of `text` fails (undefined if it does not: JSON.parse's message is told then). */
function locate(text: string): { offset: number; message: string } | undefined {
  let i = 0;
  const what = () => (i >= text.length ? "the end of the file" : `${JSON.stringify(text[i])}`);
  const skip = () => {
    while (i < text.length && WHITESPACE.has(text[i] as string)) i++;
  };
  const expect = (c: string, where: string) => {
    skip();
    if (text[i] !== c) throw new Stop(i, `expected ${JSON.stringify(c)} ${where}, found ${what()}`);
    i++;
  };
  const string = () => {
    expect('"', "to start a string");
    while (i < text.length && text[i] !== '"') {
      const c = text.charCodeAt(i);
      if (c < 0x20) throw new Stop(i, "a control character (a line break, a tab) inside a string: write it as \\n or \\t");
      if (text[i] === "\\") {
        i++;
        const escaped = text[i];
        if (escaped === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) i += 4;
        else if (escaped === undefined || !'"\\/bfnrt'.includes(escaped)) throw new Stop(i - 1, "an unknown escape in a string");
      }
      i++;
    }
    if (i >= text.length) throw new Stop(i, "a string is not closed");
    i++;
  };
  const value = (): void => {
    skip();
    const c = text[i];
    if (c === "{") {
      i++;
      skip();
      if (text[i] === "}") {
        i++;
        return;
      }
      for (;;) {
        skip();
        if (text[i] !== '"') throw new Stop(i, `expected a key in double quotes, found ${what()}${text[i] === "}" ? " (a comma before } is not JSON)" : ""}`);
        string();
        expect(":", "after a key");
        value();
        skip();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          return;
        }
        throw new Stop(i, `expected "," or "}" after a value, found ${what()}`);
      }
    }
    if (c === "[") {
      i++;
      skip();
      if (text[i] === "]") {
        i++;
        return;
      }
      for (;;) {
        skip();
        if (text[i] === "]") throw new Stop(i, 'expected a value, found "]" (a comma before ] is not JSON)');
        value();
        skip();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return;
        }
        throw new Stop(i, `expected "," or "]" after a value, found ${what()}`);
      }
    }
    if (c === '"') {
      string();
      return;
    }
    for (const word of ["true", "false", "null"])
      if (text.startsWith(word, i)) {
        i += word.length;
        return;
      }
    NUMBER.lastIndex = i;
    if (NUMBER.test(text)) {
      i = NUMBER.lastIndex;
      return;
    }
    throw new Stop(i, `expected a value (an object, a list, a string in double quotes, a number, true, false or null), found ${what()}`);
  };
  try {
    value();
    skip();
    if (i < text.length) throw new Stop(i, `expected the end of the file after the value, found ${what()}`);
    return undefined;
  } catch (e) {
    if (e instanceof Stop) return { offset: e.offset, message: e.message };
    // Deeper than the stack: nestingDepth refuses such a document before it is read.
    return undefined;
  }
}
