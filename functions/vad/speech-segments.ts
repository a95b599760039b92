/**
 * Speech segments from per-frame speech probabilities, with hysteresis as voice-activity detectors
 * do: a segment opens when a frame reaches `onset` and closes after `minSilenceMs` below `offset`;
 * segments shorter than `minSpeechMs` are dropped. Times in seconds.
 */
export interface SegmentOptions {
  frameMs: number;
  onset?: number;
  offset?: number;
  minSpeechMs?: number;
  minSilenceMs?: number;
}

export function speechSegments(probabilities: readonly number[], options: SegmentOptions): { start: number; end: number }[] {
  const { frameMs, onset = 0.5, offset = 0.35, minSpeechMs = 250, minSilenceMs = 300 } = options;
  const segments: { start: number; end: number }[] = [];
  let start: number | undefined;
  let quietSince: number | undefined;
  const close = (endFrame: number) => {
    if (start !== undefined && (endFrame - start) * frameMs >= minSpeechMs) segments.push({ start: (start * frameMs) / 1000, end: (endFrame * frameMs) / 1000 });
    start = undefined;
    quietSince = undefined;
  };
  probabilities.forEach((p, i) => {
    if (start === undefined) {
      if (p >= onset) start = i;
      return;
    }
    if (p >= offset) quietSince = undefined;
    else if (quietSince === undefined) quietSince = i;
    else if ((i - quietSince + 1) * frameMs >= minSilenceMs) close(quietSince);
  });
  close(quietSince ?? probabilities.length);
  return segments;
}
