// What in-memory read caches outside the core need to know about the stored data: whether it may have changed.
export interface ChangeFeed {
  /** Changes whenever the stored data may have changed; equal versions mean nothing was written in between. */
  version(): string;
}
