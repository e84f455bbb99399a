import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the endpoint got: a challenge (`runtime.verification`) or a pushed job. */
export interface AgentRequest {
  headers: IncomingHttpHeaders;
  /** As sent, for signature checks. */
  body: string;
  json: { type?: string; challenge?: string; jobId?: string; version?: number; attempts?: number } & Record<
    string,
    unknown
  >;
  at: number;
}

/** How the endpoint answers one request: a status and a body (after a delay), or never. */
export type AgentAnswer = { status: number; body?: unknown; delayMs?: number } | 'hang';

/** Echoes a challenge and finishes every job `handled`: an agent that works. */
export const workingAgent = (r: AgentRequest): AgentAnswer =>
  r.json.type === 'runtime.verification'
    ? { status: 200, body: { challenge: r.json.challenge } }
    : { status: 200, body: { outcome: 'handled' } };

/**
 * An HTTP agent on loopback for runtime endpoint tests (the fleet's QA switch lets it be http):
 * records every request and answers each by `behaviour`, which a test may change at any time.
 */
export class AgentEndpoint {
  readonly requests: AgentRequest[] = [];
  behaviour: (r: AgentRequest) => AgentAnswer = workingAgent;
  private readonly held = new Set<ServerResponse>();
  private readonly server: Server;
  private constructor(server: Server) {
    this.server = server;
  }

  static async start(): Promise<AgentEndpoint> {
    const server = createServer();
    const agent = new AgentEndpoint(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => agent.handle(req.headers, Buffer.concat(chunks).toString('utf8'), res));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    return agent;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/agent`;
  }

  /** The pushed jobs (not the challenges), in the order they came. */
  jobs(): AgentRequest[] {
    return this.requests.filter((r) => r.json.type !== 'runtime.verification');
  }

  private handle(headers: IncomingHttpHeaders, body: string, res: ServerResponse): void {
    let json: AgentRequest['json'] = {};
    try {
      json = JSON.parse(body) as AgentRequest['json'];
    } catch {
      // recorded as it came; the behaviour decides
    }
    const request = { headers, body, json, at: Date.now() };
    this.requests.push(request);
    const answer = this.behaviour(request);
    if (answer === 'hang') {
      this.held.add(res);
      res.on('close', () => this.held.delete(res));
      return;
    }
    const send = () => {
      const text = answer.body === undefined ? '' : JSON.stringify(answer.body);
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
    };
    if (answer.delayMs) setTimeout(send, answer.delayMs);
    else send();
  }

  async close(): Promise<void> {
    for (const res of this.held) res.destroy();
    this.server.closeAllConnections();
    await new Promise((done) => this.server.close(done));
  }
}
