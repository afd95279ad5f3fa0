import { Transform, type Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

type Reply = { code: number; message: string };
type SendReply = (reply: Reply) => void;

const NOT_JSON: Reply = { code: -32700, message: 'Parse error: the line is not JSON' };
const NOT_JSON_RPC: Reply = { code: -32600, message: 'Invalid Request: the line is JSON but not a JSON-RPC 2.0 message' };
/** What one line may hold: the hosted endpoint's body limit (a batch of 20 calls takes a few KB). */
export const STDIO_LINE_LIMIT_CHARACTERS = 64 * 1024;
const TOO_LONG: Reply = {
  code: -32600,
  message: `Invalid Request: the line is longer than ${STDIO_LINE_LIMIT_CHARACTERS} characters; it was skipped to its end`,
};

/**
 * Answers the stdio lines that are not JSON-RPC messages, as JSON-RPC 2.0 §5.1 asks: -32700 for a line that is not JSON,
 * -32600 for JSON that is not a message. The SDK's stdio transport drops the first silently and reports the second as
 * an error, so the client would wait for a reply that never comes. Returns the input to give the transport (stdin without
 * the lines that are not JSON), the error handler to give serveStdio, `answerWith`, which names how replies are sent
 * once the transport exists, and `release`, which stops reading stdin once the session is over (a stdin still piped
 * would keep the process alive after its stdout was closed).
 */
export function answerUnreadableLines(stdin: Readable): {
  input: Readable;
  /** Answers a line that is JSON but not JSON-RPC (-32600) and says true; false for any other error. */
  onerror: (error: Error) => boolean;
  answerWith: (send: (message: unknown) => Promise<void>) => void;
  release: () => void;
} {
  let send: SendReply = () => {};
  const input = stdin.pipe(jsonLinesOnly((reply) => send(reply)));
  return {
    input,
    onerror: (error) => {
      if (error.name !== 'ZodError') return false;
      send(NOT_JSON_RPC);
      return true;
    },
    answerWith: (sendMessage) => {
      send = (reply) => void sendMessage({ jsonrpc: '2.0', id: null, error: reply }).catch(() => {});
    },
    release: () => {
      stdin.unpipe(input);
      stdin.pause();
    },
  };
}

/**
 * The lines that parse as JSON, passed on whole; each other line is answered with NOT_JSON and left out. A line past
 * STDIO_LINE_LIMIT_CHARACTERS is answered TOO_LONG and skipped to its end, unkept: an agent writing without newlines
 * cannot grow the buffer without bound.
 */
function jsonLinesOnly(answer: SendReply): Transform {
  // A chunk may end inside a character: the decoder keeps its first bytes for the next one.
  const decoder = new StringDecoder('utf8');
  let partial = '';
  let skipping = false;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      let text = decoder.write(chunk);
      if (skipping) {
        const end = text.indexOf('\n');
        if (end === -1) return done();
        skipping = false;
        text = text.slice(end + 1);
      }
      const lines = (partial + text).split('\n');
      partial = lines.pop()!;
      if (partial.length > STDIO_LINE_LIMIT_CHARACTERS) {
        answer(TOO_LONG);
        partial = '';
        skipping = true;
      }
      const kept = lines.filter((line) => {
        if (isJson(line)) return true;
        answer(NOT_JSON);
        return false;
      });
      done(null, kept.length === 0 ? undefined : `${kept.join('\n')}\n`);
    },
  });
}

function isJson(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}
