/** Small order statistics for benchmark samples (linear interpolation between ranks). */

export function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return sorted[low] + (sorted[high] - sorted[low]) * (position - low);
}

export const median = (values) => quantile(values, 0.5);

/** median, min, max, p25, p75 and the interquartile range of a sample. */
export function summarize(values) {
  const finite = values.filter((value) => Number.isFinite(value));
  if (finite.length === 0) return { n: 0, median: NaN, min: NaN, max: NaN, p25: NaN, p75: NaN, iqr: NaN };
  const p25 = quantile(finite, 0.25);
  const p75 = quantile(finite, 0.75);
  return {
    n: finite.length,
    median: quantile(finite, 0.5),
    min: Math.min(...finite),
    max: Math.max(...finite),
    p25,
    p75,
    iqr: p75 - p25,
  };
}

export function round(value, digits = 1) {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** A small deterministic PRNG (mulberry32), so the bootstrap gives the same interval for the same data. */
function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Percentile-bootstrap confidence interval of the median (default 95 %, 5,000 resamples). */
export function bootstrapMedianInterval(values, { level = 0.95, resamples = 5000, seed = 1 } = {}) {
  const finite = values.filter((value) => Number.isFinite(value));
  if (finite.length < 3) return { low: NaN, high: NaN };
  const next = random(seed);
  const medians = [];
  const sample = new Array(finite.length);
  for (let round = 0; round < resamples; round += 1) {
    for (let index = 0; index < finite.length; index += 1) sample[index] = finite[Math.floor(next() * finite.length)];
    medians.push(median(sample));
  }
  return { low: quantile(medians, (1 - level) / 2), high: quantile(medians, 1 - (1 - level) / 2) };
}

/** Paired ratios' distribution with the 95 % bootstrap interval of their median. */
export function summarizeRatios(ratios) {
  const interval = bootstrapMedianInterval(ratios);
  return { ...summarize(ratios), ci95: [interval.low, interval.high] };
}
