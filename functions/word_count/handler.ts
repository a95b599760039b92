// POST /v1/functions/word_count with {"text": "..."} → {"words": n, "longest": "..."}.
// Types from the tensorfn package (here this repository itself, through its package.json
// exports; in your project, the installed package): erased at run time, so a copy of this folder
// runs anywhere.
import type { FunctionRequest, HandlerContext, HistogramMetric } from "tensorfn";

let wordsPerText: HistogramMetric | undefined;

/** Once per instance before its first call: a metric of the function's own, on /metrics with model="word_count". */
export function initialize(ctx: HandlerContext) {
  wordsPerText = ctx.metrics.histogram({ name: "word_count_words", help: "Words in each text counted", buckets: [1, 10, 100, 1000, 10000, 100000] });
}

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
    wordsPerText?.observe(words);
    return { words, longest };
  });
}
