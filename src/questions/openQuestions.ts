// OpenQuestions: the questions one upstream call has open towards its client, under the keys the
// client sees in `inputRequests`. One model for inline MRTR calls and for tasks:
// - add() files a question under a key minted for it, never used before in this life;
// - inputRequests() lists the open ones;
// - match() checks a batch of answers all-or-nothing (keys not open are ignored, as the spec
//   asks; one answer that does not fit its question refuses the whole batch and takes nothing);
// - take() removes matched questions from the open set, deliver() sends their answers upstream;
// - a question the upstream withdraws leaves the set by itself (onChange is told, unless its session
//   ended: then its call ends too, and the call's end says so; callEnding tells that it is coming).

import type { InputRequests, JsonObject } from "../protocol/wire.js";
import { mintInputKey } from "./inputKeys.js";
import { checkInputResponse } from "./inputResponseCheck.js";
import { type Question, SESSION_ENDED } from "./question.js";

export interface MatchedAnswer {
  key: string;
  question: Question;
  response: JsonObject;
}

export type MatchResult = { ok: true; answers: MatchedAnswer[] } | { ok: false; key: string; problem: string };

export class OpenQuestions {
  private readonly open = new Map<string, Question>();
  private readonly used = new Set<string>();
  private sessionGone = false;

  /**
   * `configuredKey`: the key configured for the tool (wins over the schema-derived one).
   * `onChange`: called after a question left the set on its own while its call goes on (the upstream
   * cancelled it); not when its session ended, which ends the call as well.
   */
  constructor(
    private readonly configuredKey?: string,
    private readonly onChange?: () => void,
  ) {}

  /** Files `question` under a fresh key and returns the key. */
  add(question: Question): string {
    const key = mintInputKey(question.request, this.used, this.configuredKey);
    this.used.add(key);
    this.open.set(key, question);
    question.withdrawn.addEventListener(
      "abort",
      () => {
        if (this.open.get(key) !== question) return;
        this.open.delete(key);
        if (question.withdrawn.reason === SESSION_ENDED) this.sessionGone = true;
        else this.onChange?.();
      },
      { once: true },
    );
    return key;
  }

  /** A question left with its session: the call is failing too, though its end may not be known to its holder yet. */
  get callEnding(): boolean {
    return this.sessionGone;
  }

  /** Open (unsettled) questions, by key. */
  entries(): Array<[string, Question]> {
    return [...this.open].filter(([, question]) => !question.settled);
  }

  get isEmpty(): boolean {
    return this.entries().length === 0;
  }

  inputRequests(): InputRequests {
    return Object.fromEntries(this.entries().map(([key, question]) => [key, question.request]));
  }

  /** The answers in `responses` for open questions, each checked against its question. */
  match(responses: JsonObject): MatchResult {
    const answers: MatchedAnswer[] = [];
    for (const [key, question] of this.entries()) {
      if (!Object.hasOwn(responses, key)) continue;
      const problem = checkInputResponse(question.request, responses[key]);
      if (problem) return { ok: false, key, problem };
      answers.push({ key, question, response: responses[key] as JsonObject });
    }
    return { ok: true, answers };
  }

  /** Open questions that `answers` leave unanswered. */
  remainingAfter(answers: MatchedAnswer[]): Array<[string, Question]> {
    const answered = new Set(answers.map((a) => a.key));
    return this.entries().filter(([key]) => !answered.has(key));
  }

  /** Takes answered questions out of the open set (their keys are never issued again). */
  take(answers: MatchedAnswer[]): void {
    for (const { key } of answers) this.open.delete(key);
  }

  /** Sends each answer upstream (after take()). */
  static deliver(answers: MatchedAnswer[]): void {
    for (const { question, response } of answers) question.answer(response);
  }
}
