/** One Server-Sent Events frame: its fields as sent (comments and the `retry:` frame left out). */
export interface SseFrame {
  id?: string;
  event?: string;
  data: string;
}

/** The data frames of an SSE answer as they arrive, whatever the chunks cut. */
export async function* sseFrames(response: Response): AsyncGenerator<SseFrame> {
  if (!response.body) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffered += value;
      for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
        const frame: Record<string, string> = {};
        for (const line of buffered.slice(0, end).split('\n')) {
          if (line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          frame[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, '');
        }
        buffered = buffered.slice(end + 2);
        if (frame.data !== undefined) yield frame as unknown as SseFrame;
      }
    }
  } finally {
    reader.releaseLock();
  }
}
