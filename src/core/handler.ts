// Types tying a core handler to its manifest operation: its input and output come from the zod schemas.
import type { z } from "zod";
import type { Operation, RawResponse } from "../manifest/define";
import type { OpContext } from "./context";

export interface OpInput<P = unknown, Q = unknown, B = unknown> {
  params: P;
  query: Q;
  body: B;
}

/** Bytes with a content type, for operations whose response is not JSON. */
export interface RawBody {
  body: string | Blob | ArrayBuffer;
  contentType: string;
  filename?: string;
  /** Saved by the browser, never shown in place (Content-Disposition: attachment). */
  download?: boolean;
}

type Out<S> = S extends z.ZodType ? z.output<S> : never;

export type InputOf<O> = O extends Operation<infer P, infer Q, infer B, infer _R> ? OpInput<Out<P>, Out<Q>, B extends z.ZodNever ? undefined : Out<B>> : never;

export type OutputOf<O> =
  O extends Operation<infer _P, infer _Q, infer _B, infer R> ? (R extends z.ZodType ? z.input<R> : R extends RawResponse ? RawBody : void) : never;

export type Handler<O> = (ctx: OpContext, input: InputOf<O>) => Promise<OutputOf<O>>;
