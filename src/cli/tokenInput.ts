// Where `taskgate hash-token` gets the token: stdin (a pipe: `printf %s "$TOKEN" | taskgate
// hash-token`), or a prompt that does not echo when stdin is a terminal. A token given as an
// argument still works, with a warning: arguments land in shell history and are visible to every
// user of the machine through `ps`.

import { read } from "read";

export const ARGUMENT_WARNING =
  "taskgate: warning: a token given as an argument is kept in your shell history and visible to other users (ps); " +
  'pipe it instead: printf %s "$TOKEN" | taskgate hash-token';

export const NO_TOKEN =
  "taskgate: missing required argument 'token': pipe it on stdin (printf %s \"$TOKEN\" | taskgate hash-token), " +
  "or run taskgate hash-token at a terminal and type it at the prompt";

/** All of a stream's text, without the one line break `echo` or a here-string adds at the end. */
async function readAll(input: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
}

export interface TokenIo {
  stdin: NodeJS.ReadStream;
  stderr: NodeJS.WriteStream;
}

/** The token to hash, or undefined when none was given (an empty pipe, an empty answer). */
export async function readToken(argument: string | undefined, io: TokenIo): Promise<string | undefined> {
  if (argument !== undefined) {
    io.stderr.write(`${ARGUMENT_WARNING}\n`);
    return argument === "" ? undefined : argument;
  }
  // The prompt goes to stderr, so stdout carries only the hash (`$(taskgate hash-token)` works).
  const token = io.stdin.isTTY
    ? await read({ prompt: "Token (not shown): ", silent: true, replace: "", input: io.stdin, output: io.stderr })
    : await readAll(io.stdin);
  return token === "" ? undefined : token;
}
