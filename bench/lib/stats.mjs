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
