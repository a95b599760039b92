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
    const words = text.split(/\s+/).filter((w) => w.length > 0);
    const longest = words.reduce((a, b) => (b.length > a.length ? b : a), "");
    return { words: words.length, longest };
  });
}
