// The generations table: every query operations on generations need, typed by the schema. What a generation
// reads and writes beside it (its feature, its drafts, their groups) goes through those resources' stores.
import type { Insertable, Kysely, Selectable, Updateable } from "kysely";
import type { DB, GenerationTable } from "../../db/schema";

type GenerationRow = Selectable<GenerationTable>;
type GenerationStatus = GenerationRow["status"];

const ACTIVE: GenerationStatus[] = ["queued", "running"];

/** The feature's most recent generation: the one get_generation and cancel_generation act on. */
export async function latestGeneration(db: Kysely<DB>, featureId: string): Promise<GenerationRow | undefined> {
  return db
    .selectFrom("generations")
    .selectAll()
    .where("feature_id", "=", featureId)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(1)
    .executeTakeFirst();
}

/** The most recent generation of each of these features that has one (id and status), by feature id. */
export async function latestGenerationsOf(db: Kysely<DB>, featureIds: string[]): Promise<Map<string, { id: string; status: GenerationStatus }>> {
  if (featureIds.length === 0) return new Map();
  const rows = await db
    .selectFrom("generations as g")
    .select(["g.feature_id", "g.id", "g.status"])
    .where("g.feature_id", "in", featureIds)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom("generations as h")
            .select("h.id")
            .whereRef("h.feature_id", "=", "g.feature_id")
            .where((eb) =>
              eb.or([
                eb("h.created_at", ">", eb.ref("g.created_at")),
                eb.and([eb("h.created_at", "=", eb.ref("g.created_at")), eb("h.id", ">", eb.ref("g.id"))]),
              ]),
            ),
        ),
      ),
    )
    .execute();
  return new Map(rows.map((r) => [r.feature_id, { id: r.id, status: r.status }]));
}

/** A queued or running generation of the feature, if there is one. */
export async function activeGeneration(db: Kysely<DB>, featureId: string) {
  return db.selectFrom("generations").select("id").where("feature_id", "=", featureId).where("status", "in", ACTIVE).executeTakeFirst();
}

export async function insertGeneration(db: Kysely<DB>, row: Insertable<GenerationTable>): Promise<void> {
  await db.insertInto("generations").values(row).execute();
}

/** Cancels a generation unless it finished meanwhile; answers whether it did. */
export async function cancelActiveGeneration(
  db: Kysely<DB>,
  id: string,
  patch: Pick<Updateable<GenerationTable>, "finished_at" | "updated_at" | "result">,
): Promise<boolean> {
  const res = await db
    .updateTable("generations")
    .set({ ...patch, status: "cancelled" })
    .where("id", "=", id)
    .where("status", "in", ACTIVE)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** A generation known to exist. */
export async function readGeneration(db: Kysely<DB>, id: string): Promise<GenerationRow> {
  return db.selectFrom("generations").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
}

export async function generationStatus(db: Kysely<DB>, id: string): Promise<GenerationStatus | undefined> {
  return (await db.selectFrom("generations").select("status").where("id", "=", id).executeTakeFirst())?.status;
}

/** Writes to a generation while it is `running` (a cancelled or finished record is never written over). */
export async function updateRunningGeneration(db: Kysely<DB>, id: string, patch: Updateable<GenerationTable>): Promise<void> {
  await db.updateTable("generations").set(patch).where("id", "=", id).where("status", "=", "running").execute();
}

/** Fails every `running` generation; answers how many. */
export async function failRunningGenerations(
  db: Kysely<DB>,
  patch: Pick<Updateable<GenerationTable>, "error" | "finished_at" | "updated_at">,
): Promise<number> {
  const res = await db
    .updateTable("generations")
    .set({ ...patch, status: "failed" })
    .where("status", "=", "running")
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}
