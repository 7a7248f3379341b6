export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return NaN;
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[i] as number;
}
export function summary(xs: number[]): string {
  const f = (v: number) => v.toFixed(1);
  return `n=${xs.length} p50=${f(percentile(xs, 50))}ms p90=${f(percentile(xs, 90))}ms p99=${f(percentile(xs, 99))}ms max=${f(Math.max(...xs))}ms`;
}
