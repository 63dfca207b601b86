// Drives generation through the real API in tests: a project with a feature, a generation polled to its end.
import { expect } from "bun:test";
import type { TestServer } from "./server";

export interface GenerationRecord {
  id: string;
  status: string;
  strategy: string;
  progress: { stage: string; done: number; total: number };
  warnings: { message: string; generator?: string; scenario?: string; line?: number; text?: string; suggestion?: string }[];
  automation_ids: string[];
  result: string | null;
  error: string | null;
  started_at: string | null;
  finished_at: string | null;
}

export interface AutomationRecord {
  id: string;
  name: string;
  description: string;
  kind: "http" | "browser";
  status: string;
  source: string;
  feature_id: string | null;
  generation_id: string | null;
  steps: Record<string, unknown>[];
  tags: string[];
}

export async function json<T>(res: Response, status: number): Promise<T> {
  const text = await res.text();
  if (res.status !== status) throw new Error(`expected HTTP ${status}, got ${res.status}: ${text}`);
  return (text ? JSON.parse(text) : null) as T;
}

export async function createProject(t: TestServer, slug: string, extra: Record<string, unknown> = {}): Promise<string> {
  const p = await json<{ id: string }>(await t.call("POST", "/projects", { name: slug, slug, ...extra }), 201);
  return p.id;
}

export async function createFeature(t: TestServer, project: string, body: Record<string, unknown>): Promise<string> {
  return (await json<{ id: string }>(await t.call("POST", `/projects/${project}/features`, body), 201)).id;
}

export async function generate(t: TestServer, project: string, feature: string, strategy?: string): Promise<GenerationRecord> {
  const path = `/projects/${project}/features/${feature}/generation`;
  await json(await t.call("POST", path, strategy ? { strategy } : {}), 202);
  return waitForGeneration(t, project, feature);
}

export async function waitForGeneration(t: TestServer, project: string, feature: string, timeoutMs = 30_000): Promise<GenerationRecord> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const g = await json<GenerationRecord>(await t.call("GET", `/projects/${project}/features/${feature}/generation`), 200);
    if (["succeeded", "failed", "cancelled"].includes(g.status)) return g;
    if (Date.now() > deadline) throw new Error(`generation still ${g.status} after ${timeoutMs} ms`);
    await Bun.sleep(50);
  }
}

export async function automationsOf(t: TestServer, project: string, g: GenerationRecord): Promise<AutomationRecord[]> {
  const out: AutomationRecord[] = [];
  for (const id of g.automation_ids) out.push(await json<AutomationRecord>(await t.call("GET", `/projects/${project}/automations/${id}`), 200));
  return out;
}

export async function runToEnd(t: TestServer, project: string, automationId: string, environment: string, timeoutMs = 60_000) {
  const run = await json<{ id: string }>(await t.call("POST", `/projects/${project}/automations/${automationId}/run`, { environment }), 202);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await json<{ status: string; error: string | null; steps?: { name: string; status: string; message: string | null }[] }>(
      await t.call("GET", `/projects/${project}/runs/${run.id}`),
      200,
    );
    if (!["queued", "running"].includes(r.status)) return r;
    expect(Date.now()).toBeLessThan(deadline);
    await Bun.sleep(100);
  }
}
