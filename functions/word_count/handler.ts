// POST /v1/functions/word_count with {"text": "..."} → {"words": n, "longest": "..."}.
// Types only (erased at run time): a copy of this folder works anywhere; in your own project,
// import them from the tensorfn package.
import type { FunctionRequest, HandlerContext } from "../../runtime/mod.ts";

/** One call for every request the batcher gathered: one answer each, in order. */
export function execute(requests: FunctionRequest[], ctx: HandlerContext) {
  return requests.map((request) => {
    // Whatever the client sent: `null`, `[]` and `"x"` are JSON too.
    const text = (request.json<{ text?: unknown } | null>() ?? {}).text;
    if (typeof text !== "string") throw ctx.error('send {"text": "..."}');
    // One pass without an array of every word: a 10 MiB text must not cost twenty times that.
    let words = 0;
    let longest = "";
    for (const match of text.matchAll(/\S+/g)) {
      words++;
      if (match[0].length > longest.length) longest = match[0];
    }
    return { words, longest };
  });
}
