import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/** One answer as a client saw it: what was asked, and the status, headers and bytes that came back. */
export interface Exchange {
  method: string;
  url: string;
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: Buffer;
}

type Schema = Record<string, unknown>;
type Header = { schema: Schema; required?: boolean };
type Response = { headers?: Record<string, Header>; content?: Record<string, { schema: Schema }> };
type Operation = { responses: Record<string, Response> };
export type OpenApiDocument = { paths: Record<string, Record<string, Operation>>; components?: Schema };

/**
 * Checks answers against an OpenAPI document the way an independent validator (Prism) does: the status is declared
 * for the operation, every required header is there, every declared header's value fits its schema, and the body
 * (decoded from its content coding) fits the declared content, or is empty where none is declared. A path the
 * document doesn't list must answer 404, and a method it doesn't list on a path 405, as the document declares them.
 * Returns what disagrees, in words; empty when nothing does.
 */
export function openApiResponseChecker(document: OpenApiDocument): (exchange: Exchange) => string[] {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'openapi', components: document.components ?? {} });
  const compiled = new Map<Schema, ValidateFunction>();
  const validator = (schema: Schema) => {
    let validate = compiled.get(schema);
    if (!validate) {
      // The document's own references (`#/components/…`) point into the schema registered above.
      validate = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/')) as Schema);
      compiled.set(schema, validate);
    }
    return validate;
  };
  const anyOperation = Object.values(Object.values(document.paths)[0]!)[0]!;
  // A path with parameters (`/users/{id}`) matches any one segment in their places.
  const escaped = (text: string) => text.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
  const templates = Object.keys(document.paths).map((template) => ({
    template,
    pattern: new RegExp(
      `^${template
        .split(/\{[^}/]+\}/)
        .map(escaped)
        .join('[^/]+')}$`,
    ),
  }));
  const operationsAt = (path: string) => {
    const exact = document.paths[path];
    if (exact) return exact;
    const matched = templates.find(({ pattern }) => pattern.test(path));
    return matched === undefined ? undefined : document.paths[matched.template];
  };

  return (exchange) => {
    const path = exchange.url.split('?', 1)[0]!;
    const method = exchange.method.toLowerCase();
    // A CORS preflight is the browser's protocol around the operations, not one of them.
    if (method === 'options' && exchange.status === 204) return [];
    const operations = operationsAt(path);
    const where = `${exchange.method} ${exchange.url} → ${exchange.status}`;
    const operation = operations?.[method] ?? Object.values(operations ?? {})[0] ?? anyOperation;
    if (!operations && exchange.status !== 404) return [`${where}: the path is not in the document, so only 404 may answer`];
    if (operations && !operations[method] && exchange.status !== 405)
      return [`${where}: the method is not in the document, so only 405 may answer`];
    const response = operation.responses[String(exchange.status)];
    if (!response) return [`${where}: status ${exchange.status} is not declared`];

    const problems: string[] = [];
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      const raw = exchange.headers[name.toLowerCase()];
      if (raw === undefined) {
        if (header.required) problems.push(`${where}: required header ${name} is missing`);
        continue;
      }
      const text = String(raw);
      const value = header.schema.type === 'integer' && /^\d+$/.test(text) ? Number(text) : text;
      const validate = validator(header.schema);
      if (!validate(value)) problems.push(`${where}: header ${name}: ${JSON.stringify(text)} ${ajv.errorsText(validate.errors)}`);
    }

    const [mediaType, media] = Object.entries(response.content ?? {})[0] ?? [];
    if (method === 'head' || media === undefined) {
      if (exchange.body.length > 0) problems.push(`${where}: a body of ${exchange.body.length} B where none is declared`);
      return problems;
    }
    const contentType = String(exchange.headers['content-type'] ?? '');
    if (!contentType.startsWith(mediaType!)) problems.push(`${where}: Content-Type ${contentType} is not ${mediaType}`);
    let body: unknown;
    try {
      body = JSON.parse(decoded(exchange).toString('utf8'));
    } catch (error) {
      return [...problems, `${where}: the body is not JSON: ${(error as Error).message}`];
    }
    const validate = validator(media.schema);
    if (!validate(body)) problems.push(`${where}: body ${ajv.errorsText(validate.errors)}`);
    return problems;
  };
}

function decoded(exchange: Exchange): Buffer {
  const coding = exchange.headers['content-encoding'];
  if (coding === 'br') return brotliDecompressSync(exchange.body);
  if (coding === 'gzip') return gunzipSync(exchange.body);
  return exchange.body;
}
