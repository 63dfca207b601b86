// What the exporters share.
import type { z } from "zod";
import type { Operators as OperatorsSchema } from "../../manifest/automation-format";

/** An assertion's comparison operators, as the manifest declares them (at least one is given). */
export type Operators = z.infer<typeof OperatorsSchema>;
