// Values derived from texts that recur (stored snapshots, JSON paths, patterns, schemas), derived once per text and
// kept up to a bound. When full, everything is dropped at once and refills with what is in use now: simpler and
// cheaper per hit than least-recently-used order, and the texts in use are few beside the bound.

export class TextMemo<V> {
  private readonly values = new Map<string, V>();

  constructor(private readonly max: number) {}

  /** The value derived from `text`, from `derive` the first time; a `derive` that throws leaves nothing kept. */
  get(text: string, derive: () => V): V {
    const hit = this.values.get(text);
    if (hit !== undefined) return hit;
    const value = derive();
    if (this.values.size >= this.max) this.values.clear();
    this.values.set(text, value);
    return value;
  }

  get size(): number {
    return this.values.size;
  }
}
