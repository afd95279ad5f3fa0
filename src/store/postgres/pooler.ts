import pg from 'pg';
import type { PoolerSetting } from '../../domain/database-url.js';

/**
 * How a pool's connections reach PostgreSQL. `direct`: each connection is one server session for its whole life, so
 * session settings and named prepared statements stay where they were made. `pooled`: a transaction pooler hands each
 * transaction to whichever server connection is free, so nothing may outlive a transaction.
 */
export type SessionMode = 'direct' | 'pooled';

/** What the first connection showed about the session behind it. */
export interface SessionProbe {
  /** The process id in the BackendKeyData the connection was given at startup, if any. */
  announcedPid: number | null;
  /** pg_backend_pid() of the server process that answered the probe. */
  serverPid: number;
}

/**
 * The one rule. A transaction pooler must give each client a cancel key of its own (a server's key would cancel
 * whatever other client holds that server connection when the cancel arrives), so a startup pid that is not the
 * answering server process's means a pooler sits in between; no pid at all is as unsure, and unsure is pooled.
 * A transport that passes the server's own key on (a TCP proxy, Docker's published port) passes the session on: direct.
 * Comparing the client port the server sees with our socket's would call those proxies pooled, and lose the prepared
 * statements for nothing.
 */
export function sessionModeOf(probe: SessionProbe): SessionMode {
  return probe.announcedPid === probe.serverPid ? 'direct' : 'pooled';
}

/**
 * The mode `setting` (DB_POOLER) names, or, for `auto`, the one a probe connection shows: one extra connection when the
 * pool first connects, opened without any startup setting, which a pooler would refuse.
 */
export async function sessionModeFor(setting: PoolerSetting, config: pg.ClientConfig): Promise<SessionMode> {
  switch (setting) {
    case 'none':
      return 'direct';
    case 'transaction':
      return 'pooled';
    case 'auto':
      return sessionModeOf(await probeSession(config));
  }
}

async function probeSession(config: pg.ClientConfig): Promise<SessionProbe> {
  const client = new pg.Client(config);
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    // pg keeps the BackendKeyData's pid on the client without declaring it in its types.
    const { processID } = client as unknown as { processID: number | null };
    return { announcedPid: processID, serverPid: rows[0]!.pid };
  } finally {
    await client.end();
  }
}
