/**
 * The "competent first try" the benchmark compares against, on bare node:http so the comparison is
 * conservative: a hashed-key lookup per request, a per-request COUNT(*) and a plain OFFSET query over an
 * index covering owner, exclusion flags and order, and JSON.stringify. Same database, same schema.
 * Usage: PORT=… DATABASE_URL=file:…|postgres://… tsx bench/baseline-server.ts
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import Database from 'better-sqlite3';
import pg from 'pg';

const COLUMNS =
  'id, name, email, phone, company, title, school, linkedin_url, location, description, tags, enrichment, enriched_at, source, birthday, created_at, updated_at, research_data, researched_at';

interface Backend {
  findKey(hash: string): Promise<{ owner_id: string; scopes: string[]; plan: string; revoked: boolean } | undefined>;
  count(owner: string): Promise<number>;
  page(owner: string, limit: number, offset: number): Promise<Record<string, unknown>[]>;
}

function sqliteBackend(path: string): Backend {
  const db = new Database(path, { readonly: true });
  db.pragma('journal_mode = WAL');
  const key = db.prepare(
    'SELECT k.owner_id, k.scopes, u.plan, k.revoked_at IS NOT NULL AS revoked FROM api_keys k JOIN users u ON u.id = k.owner_id WHERE k.secret_hash = ?',
  );
  const count = db.prepare('SELECT count(*) AS n FROM contacts WHERE owner_id = ? AND merged_into IS NULL AND is_self = 0');
  const page = db.prepare(
    `SELECT ${COLUMNS} FROM contacts WHERE owner_id = ? AND merged_into IS NULL AND is_self = 0 ORDER BY created_at, id LIMIT ? OFFSET ?`,
  );
  return {
    async findKey(hash) {
      const row = key.get(hash) as { owner_id: string; scopes: string; plan: string; revoked: number } | undefined;
      return row && { owner_id: row.owner_id, scopes: JSON.parse(row.scopes), plan: row.plan, revoked: row.revoked === 1 };
    },
    async count(owner) {
      return (count.get(owner) as { n: number }).n;
    },
    async page(owner, limit, offset) {
      return (page.all(owner, limit, offset) as Record<string, unknown>[]).map((row) => {
        for (const column of ['tags', 'enrichment', 'research_data'])
          if (row[column] !== null) row[column] = JSON.parse(row[column] as string);
        return row;
      });
    },
  };
}

function postgresBackend(url: string): Backend {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  return {
    async findKey(hash) {
      const { rows } = await pool.query(
        'SELECT k.owner_id, k.scopes, u.plan, k.revoked_at IS NOT NULL AS revoked FROM api_keys k JOIN users u ON u.id = k.owner_id WHERE k.secret_hash = $1',
        [hash],
      );
      return rows[0];
    },
    async count(owner) {
      const { rows } = await pool.query(
        'SELECT count(*)::int AS n FROM contacts WHERE owner_id = $1 AND merged_into IS NULL AND NOT is_self',
        [owner],
      );
      return rows[0].n;
    },
    async page(owner, limit, offset) {
      const { rows } = await pool.query(
        `SELECT ${COLUMNS} FROM contacts WHERE owner_id = $1 AND merged_into IS NULL AND NOT is_self ORDER BY created_at, id LIMIT $2 OFFSET $3`,
        [owner, limit, offset],
      );
      return rows.map((row) => ({ ...row, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() }));
    },
  };
}

const url = process.env.DATABASE_URL!;
const backend = url.startsWith('postgres') ? postgresBackend(url) : sqliteBackend(url.replace(/^file:/, ''));

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  response.end(text);
}

async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
  try {
    const url = new URL(request.url!, 'http://localhost');
    if (url.pathname !== '/api/v1/contacts') return send(response, 404, { error: 'Not found' });
    const token = /^Bearer (\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
    const key = token ? await backend.findKey(createHash('sha256').update(token).digest('hex')) : undefined;
    if (!key || key.revoked) return send(response, 401, { error: 'Invalid or inactive API key' });
    if (!key.scopes.includes('contacts:read')) return send(response, 403, { error: 'API key lacks contacts:read' });
    if (key.plan !== 'pro') return send(response, 403, { error: 'API access requires a Pro plan' });
    const limit = Number(url.searchParams.get('limit') ?? 50);
    const offset = Number(url.searchParams.get('offset') ?? 0);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100 || !Number.isInteger(offset) || offset < 0) {
      return send(response, 400, { error: 'Invalid pagination' });
    }
    const [total, data] = await Promise.all([backend.count(key.owner_id), backend.page(key.owner_id, limit, offset)]);
    const next = offset + data.length;
    send(response, 200, { data, pagination: { limit, offset, total, nextOffset: data.length > 0 && next < total ? next : null } });
  } catch {
    send(response, 500, { error: 'Internal server error' });
  }
}

createServer((request, response) => void answer(request, response)).listen(Number(process.env.PORT), '127.0.0.1', () =>
  process.stdout.write('ready\n'),
);
