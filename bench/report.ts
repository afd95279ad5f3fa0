/** The bench's figures and the tables it prints and writes. */

/** How a row's responses travel: as they are, or in the coding a ceiling of its own sends. */
export type Coding = 'identity' | 'gzip' | 'br';

export interface Measurement {
  target: string;
  scenario: string;
  /** Which ceiling the row's CPU is compared with. */
  coding?: Coding;
  rps: number;
  p50: number;
  p99: number;
  /** Requests answered in the measured run. */
  requests?: number;
  /** CPU µs per request of the server's processes plus, on PostgreSQL, the database's. */
  cpuUs?: number | null;
  /** The database's share of cpuUs (PostgreSQL), µs per request. */
  dbCpuUs?: number | null;
  /** Lines the service logged per request in the measured run. */
  logLinesPerRequest?: number | null;
  peakRssMb: number[];
  note?: string;
}

export const CEILING_TARGETS: Record<Coding, string> = { identity: 'ceiling', gzip: 'ceiling (gzip)', br: 'ceiling (br)' };

const fixed = (value: number | null | undefined, digits: number) => (value === null || value === undefined ? '—' : value.toFixed(digits));

export function table(results: Measurement[]): string {
  const ceilingCpu = (row: Measurement) => results.find((r) => r.target === CEILING_TARGETS[row.coding ?? 'identity'])?.cpuUs;
  const baselineOf = (row: Measurement) => {
    const kind = row.target.includes('PostgreSQL') ? 'PostgreSQL' : 'SQLite';
    return results.find((r) => r.target === `baseline (${kind})` && r.scenario === row.scenario)?.rps;
  };
  const lines = [
    '| target | scenario | CPU µs per request | × ceiling CPU | of it db µs | req/s | p50 ms | p99 ms | log lines per request | peak RSS MB per worker, during the row | req/s × baseline |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|',
  ];
  for (const row of results) {
    const baseline = baselineOf(row);
    const ceiling = ceilingCpu(row);
    const ratio = row.cpuUs && ceiling ? `${(row.cpuUs / ceiling).toFixed(1)}×` : '—';
    const isWalk = row.scenario.startsWith('sequential');
    lines.push(
      `| ${row.target} | ${row.scenario}${row.note ? ` (${row.note})` : ''} | ${fixed(row.cpuUs, 0)} | ${ratio} | ${fixed(row.dbCpuUs, 0)} | ${row.rps.toFixed(0)} | ${isWalk ? '—' : row.p50.toFixed(2)} | ${isWalk ? '—' : row.p99.toFixed(2)} | ${fixed(row.logLinesPerRequest, 2)} | ${row.peakRssMb.join(', ')} | ${baseline ? (row.rps / baseline).toFixed(1) : '—'} |`,
    );
  }
  return lines.join('\n');
}

export interface ScaleFigures {
  scale: number;
  databases: { name: string; diskBytes: number; loadSeconds: number | null }[];
  results: Measurement[];
}

/** Growth past which a figure must be explained or fixed (issue 15). */
const GROWTH_LIMIT = 1.5;
/** Every scenario but the walk, whose length grows with the network by design. */
const comparedAcrossScales = (row: Measurement) => row.target.startsWith('service') && !row.scenario.startsWith('sequential walk');

/** The service's latencies at the smallest and largest scale measured, side by side, with how much each grew. */
export function scaleComparison(runs: ScaleFigures[]): string {
  const [small, large] = [runs[0]!, runs.at(-1)!];
  // The ceiling's one scenario names the big network as that run measured it ("99k network").
  const bigNetworkOf = (run: ScaleFigures) => run.results.find((r) => r.target === 'ceiling')!.scenario.replace(/^first page, /, '');
  const [smallBig, largeBig] = [bigNetworkOf(small), bigNetworkOf(large)];
  const bigName = (scenario: string) => scenario.replace(smallBig, 'big network').replace(largeBig, 'big network');
  // wrk leaves out requests that time out (2 s): a run with none answered has no latency to compare.
  const latency = (run: Measurement, value: number) => (run.rps === 0 ? '—' : value.toFixed(2));
  const lines = [
    `| service | scenario | p50 ms, scale ${small.scale} | p50 ms, scale ${large.scale} | p99 ms, scale ${small.scale} | p99 ms, scale ${large.scale} | req/s, scale ${small.scale} | req/s, scale ${large.scale} | p99 growth |`,
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of small.results.filter(comparedAcrossScales)) {
    const other = large.results.find((r) => r.target === row.target && bigName(r.scenario) === bigName(row.scenario));
    if (!other) continue;
    const growth = other.p99 / row.p99;
    const growthCell =
      other.rps === 0 || row.rps === 0
        ? '**none answered**'
        : growth > GROWTH_LIMIT
          ? `**${growth.toFixed(2)}×**`
          : `${growth.toFixed(2)}×`;
    lines.push(
      `| ${row.target} | ${bigName(row.scenario)} | ${latency(row, row.p50)} | ${latency(other, other.p50)} | ${latency(row, row.p99)} | ${latency(other, other.p99)} | ${row.rps.toFixed(0)} | ${other.rps.toFixed(0)} | ${growthCell} |`,
    );
  }
  const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(2)} GiB`;
  const load = (seconds: number | null) => (seconds === null ? 'loaded earlier' : `${seconds.toFixed(0)} s`);
  lines.push(
    '',
    `| database | disk, scale ${small.scale} | disk, scale ${large.scale} | load, scale ${small.scale} | load, scale ${large.scale} |`,
    '|---|---:|---:|---:|---:|',
  );
  for (const db of small.databases) {
    const other = large.databases.find((d) => d.name === db.name);
    if (other)
      lines.push(`| ${db.name} | ${gib(db.diskBytes)} | ${gib(other.diskBytes)} | ${load(db.loadSeconds)} | ${load(other.loadSeconds)} |`);
  }
  return lines.join('\n');
}
