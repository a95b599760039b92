// Audio a voice-activity detector can be tested and measured on, made here (no recordings in the
// repository): voiced speech-like sound, and quiet noise.

/** Samples per second (Silero VAD's rate). */
export const SR = 16000;

/** Voiced speech-like audio: harmonics of a gliding 110 Hz voice shaped by two formants, in 3 Hz syllables. */
export function speech(seconds: number, seed: number): Float32Array {
  const out = new Float32Array(SR * seconds);
  let phase = 0;
  for (let i = 0; i < out.length; i++) {
    const t = i / SR;
    const f0 = 110 + 30 * Math.sin(2 * Math.PI * 0.7 * t + seed);
    phase += (2 * Math.PI * f0) / SR;
    const envelope = Math.max(0, Math.sin(2 * Math.PI * 3 * t + seed)) ** 0.6;
    let v = 0;
    for (let h = 1; h <= 30; h++) {
      const f = h * f0;
      v += ((Math.exp(-(((f - 700) / 150) ** 2)) + 0.6 * Math.exp(-(((f - 1200) / 200) ** 2)) + 0.05) * Math.sin(h * phase)) / h ** 0.3;
    }
    out[i] = (0.3 * envelope * v) / 4;
  }
  return out;
}

/** Quiet noise from a seeded generator. */
export function noise(seconds: number, seed: number): Float32Array {
  let x = seed;
  return Float32Array.from({ length: SR * seconds }, () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return (x / 2 ** 31 - 0.5) * 0.02;
  });
}
