// Markdown files imported as text (`with { type: "text" }`): Bun embeds them in the executable.
declare module "*.md" {
  const text: string;
  export default text;
}
