// The parser ships no types: what test/metrics reads of its output.
declare module 'parse-prometheus-text-format' {
  interface Family {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: unknown[];
  }
  export default function parsePrometheusTextFormat(text: string): Family[];
}
