import { Transform, type Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

type Reply = { code: number; message: string };
type SendReply = (reply: Reply) => void;

const NOT_JSON: Reply = { code: -32700, message: 'Parse error: the line is not JSON' };
const NOT_JSON_RPC: Reply = { code: -32600, message: 'Invalid Request: the line is JSON but not a JSON-RPC 2.0 message' };

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
  onerror: (error: Error) => void;
  answerWith: (send: (message: unknown) => Promise<void>) => void;
  release: () => void;
} {
  let send: SendReply = () => {};
  const input = stdin.pipe(jsonLinesOnly((reply) => send(reply)));
  return {
    input,
    onerror: (error) => {
      if (error.name === 'ZodError') send(NOT_JSON_RPC);
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

/** The lines that parse as JSON, passed on whole; each other line is answered with NOT_JSON and left out. */
function jsonLinesOnly(answer: SendReply): Transform {
  // A chunk may end inside a character: the decoder keeps its first bytes for the next one.
  const decoder = new StringDecoder('utf8');
  let partial = '';
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const lines = (partial + decoder.write(chunk)).split('\n');
      partial = lines.pop()!;
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
