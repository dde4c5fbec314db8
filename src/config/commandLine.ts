// splitCommandLine: a command line as a person types it ("npx -y @scope/server '/my dir'") into
// the argv list upstream.command holds. Words split on whitespace; '…' keeps its text as is; "…"
// and a bare backslash escape the next character. No variables, globs or pipes: the server is
// started without a shell, so what you write is exactly what it gets.

/** The argv of `line`; throws with the reason when a quote is left open. */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < line.length; i++) {
    const char = line[i] as string;
    if (quote === "'") {
      if (char === "'") quote = undefined;
      else word += char;
      continue;
    }
    if (char === "\\" && i + 1 < line.length) {
      word = (word ?? "") + line[++i];
      continue;
    }
    if (quote === '"') {
      if (char === '"') quote = undefined;
      else word += char;
      continue;
    }
    if (char === "'" || char === '"') {
      quote = char;
      word ??= "";
    } else if (/\s/.test(char)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word = (word ?? "") + char;
    }
  }
  if (quote) throw new Error(`the ${quote === "'" ? "single" : "double"} quote opened in it is never closed`);
  if (word !== undefined) words.push(word);
  return words;
}
