import type { Reply } from "../call/mod.ts";

const utf8 = new TextEncoder();

/**
 * One writer of Server-Sent Events for every streaming route: each of `events` (JSON text) as a
 * `data:` event, then `end` where the protocol has a closing sentinel (OpenAI's `[DONE]`; Triton's
 * generate_stream has none). The first event is awaited here, so a failure before it throws: an
 * ordinary error reply with its status. After it the status line has gone, so a failure is a last
 * `data:` event of `failure(error)`, then `end`, as Triton and vLLM send. A client that goes away
 * stops the producer (`events.return()`: the scheduler frees what the request held).
 */
export async function sseReply(events: AsyncGenerator<string, unknown, unknown>, failure: (error: unknown) => string, end?: string): Promise<Reply> {
  const first = await events.next();
  let done = false;
  const finish = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    done = true;
    if (end !== undefined) controller.enqueue(event(end));
    controller.close();
  };
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      if (first.done) return finish(controller);
      controller.enqueue(event(first.value));
    },
    async pull(controller) {
      if (done) return;
      try {
        const next = await events.next();
        if (!next.done) return controller.enqueue(event(next.value));
      } catch (error) {
        controller.enqueue(event(failure(error)));
      }
      finish(controller);
    },
    async cancel() {
      await events.return(undefined);
    },
  });
  return { status: 200, headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" }, body: stream };
}

function event(data: string): Uint8Array {
  return utf8.encode(`data: ${data}\n\n`);
}
