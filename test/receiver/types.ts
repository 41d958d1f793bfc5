/**
 * Wire types of the fake webhook receiver's control API (`/_control/…`), shared by the Node server and
 * the fetch-based client that runs inside workerd. Types only: importing this file pulls in no code.
 */

/** Answer with `status` (after `delayMs`), with these headers and this body (default: empty). */
export interface ReplyStep {
  /** 200–599. */
  status: number;
  /** Wait this long after the request body arrived before answering. */
  delayMs?: number;
  /** e.g. `{"retry-after": "2"}`. */
  headers?: Record<string, string>;
  /** Sent as is; content-type defaults to text/plain when a body is given without one. */
  body?: string;
  hang?: false;
  destroy?: false;
}

/** Never answer: the socket stays open until the client gives up (or the endpoint/server goes away). */
export interface HangStep {
  hang: true;
  /** Ignored; allowed so `{status, hang: true}` reads naturally. */
  status?: number;
  delayMs?: number;
  destroy?: false;
}

/** Destroy the socket without answering (after `delayMs`): the client sees a broken connection. */
export interface DestroyStep {
  destroy: true;
  /** Ignored; allowed so `{status, destroy: true}` reads naturally. */
  status?: number;
  delayMs?: number;
  hang?: false;
}

/** What the endpoint does with one request. */
export type Step = ReplyStep | HangStep | DestroyStep;

/** Each request consumes the next step of `script`; once it is used up, `default` applies (default `{status: 204}`). */
export interface Behaviour {
  script?: Step[];
  default?: Step;
}

export interface CreateEndpointOptions extends Behaviour {
  /** Give the endpoint its own listening socket, so it can be taken down (connection refused) and up again. */
  dedicatedPort?: boolean;
}

/** `POST /_control/endpoints` → 201. */
export interface CreatedEndpoint {
  id: string;
  /** `http://127.0.0.1:<port>/hooks/<id>`: the main port, or the endpoint's own port with `dedicatedPort`. */
  url: string;
}

/** `GET /_control/endpoints/<id>`, and the answer of `/down`, `/up` and `PUT /behaviour`. */
export interface EndpointInfo extends CreatedEndpoint {
  dedicatedPort: boolean;
  /** false only while a dedicated listener is down. */
  up: boolean;
  /** Requests recorded so far. */
  total: number;
  /** How many script steps the next request finds left (0: `default` applies). */
  scriptRemaining: number;
  /** Requests still hanging (a `hang` step whose client has not gone away). */
  hanging: number;
}

export type Outcome = number | "hang" | "destroy";

/** One request to `/hooks/<id>[/…]`, recorded once its body has arrived (in that order). */
export interface RecordedRequest {
  /** 0, 1, 2… per endpoint. */
  index: number;
  method: string;
  /** Path and query as sent, e.g. "/hooks/e1-ab12cd34?x=1". */
  path: string;
  /** Names lower-cased; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** The body as UTF-8 text ("" if none). */
  body: string;
  /** ms since the epoch, when the request line arrived. */
  receivedAt: number;
  /** The status answered, or what the step did instead. */
  outcome: Outcome;
}

/** `GET /_control/endpoints/<id>/requests?since=<n>`: the requests with index ≥ n, and how many were recorded in all. */
export interface RequestsResult {
  requests: RecordedRequest[];
  total: number;
}

/** Every control API error body. */
export interface ReceiverErrorBody {
  error: string;
  message: string;
}
