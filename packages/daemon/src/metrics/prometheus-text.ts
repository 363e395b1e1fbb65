/** Prometheus text exposition format 0.0.4. */
export const prometheusContentType = 'text/plain; version=0.0.4; charset=utf-8';

export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  readonly labels?: Labels;
  readonly value: number;
  /** Appended to the metric name, e.g. "_bucket" for a histogram's buckets. */
  readonly suffix?: string;
}

export interface MetricFamily {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  readonly samples: readonly Sample[];
}

function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

function formatLabels(labels: Labels | undefined): string {
  const entries = Object.entries(labels ?? {});
  if (entries.length === 0) return '';
  return `{${entries.map(([name, value]) => `${name}="${escapeLabelValue(value)}"`).join(',')}}`;
}

export function renderMetrics(families: readonly MetricFamily[]): string {
  const lines: string[] = [];
  for (const family of families) {
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`);
    for (const sample of family.samples) lines.push(`${family.name}${sample.suffix ?? ''}${formatLabels(sample.labels)} ${formatValue(sample.value)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** A cumulative histogram (buckets are upper bounds, in the unit observed). */
export class Histogram {
  private readonly bounds: readonly number[];
  private readonly counts: number[];
  private sum = 0;
  private count = 0;

  constructor(bounds: readonly number[]) {
    this.bounds = [...bounds].sort((left, right) => left - right);
    this.counts = this.bounds.map(() => 0);
  }

  observe(value: number): void {
    this.sum += value;
    this.count += 1;
    this.bounds.forEach((bound, index) => {
      if (value <= bound) this.counts[index]! += 1;
    });
  }

  samples(): Sample[] {
    return [
      ...this.bounds.map((bound, index) => ({ suffix: '_bucket', labels: { le: formatValue(bound) }, value: this.counts[index]! })),
      { suffix: '_bucket', labels: { le: '+Inf' }, value: this.count },
      { suffix: '_sum', value: this.sum },
      { suffix: '_count', value: this.count },
    ];
  }
}
