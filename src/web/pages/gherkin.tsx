// A read-only view of acceptance criteria with Gherkin keywords highlighted, shown beside the text area.
const KEYWORD = /^(\s*)(Feature:|Background:|Scenario Outline:|Scenario:|Examples:|Given|When|Then|And|But|\*)(.*)$/;

export function GherkinPreview({ text }: { text: string }) {
  if (!text.trim()) return null;
  return (
    <pre class="gherkin" aria-label="Acceptance criteria, highlighted">
      {text.split("\n").map((line, i) => {
        const m = KEYWORD.exec(line);
        if (!m)
          return (
            <div key={i} class={line.trim().startsWith("#") ? "g-comment" : ""}>
              {line || " "}
            </div>
          );
        const heading = (m[2] ?? "").endsWith(":");
        return (
          <div key={i}>
            {m[1]}
            <span class={heading ? "g-heading" : "g-step"}>{m[2]}</span>
            {m[3]}
          </div>
        );
      })}
    </pre>
  );
}
