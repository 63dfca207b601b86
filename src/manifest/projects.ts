// Operations on projects.
import { z } from "zod";
import { defineOperation, Description, ListQuery, Name, page, ProjectParams, Slug } from "./define";
import { Project } from "./records";

const OpenApiDocument = z.record(z.string(), z.unknown()).describe("An OpenAPI 3.x document of the system under test");
const ProjectName = Name.describe("The project's name");
const ProjectSlug = Slug.describe("Short name in URLs and commands (lowercase letters, digits, dashes); derived from the name when not given");
const ProjectDescription = Description.describe("What the project tests, for people");

export const listProjects = defineOperation({
  name: "list_projects",
  method: "GET",
  path: "/projects",
  summary: "List the projects of the key's workspace",
  query: ListQuery,
  response: page(Project, "ProjectPage"),
  hints: { readOnly: true, idempotent: true },
  cached: true,
  cli: { words: ["projects", "list"] },
});

export const createProject = defineOperation({
  name: "create_project",
  method: "POST",
  path: "/projects",
  summary: "Create a project (the slug is derived from the name when not given)",
  body: z.strictObject({
    name: ProjectName,
    slug: ProjectSlug.optional(),
    description: ProjectDescription.optional(),
    openapi: OpenApiDocument.optional(),
  }),
  response: Project,
  successStatus: 201,
  errors: ["conflict"],
  versioned: true,
  cli: { words: ["projects", "create"], args: ["name"] },
});

export const getProject = defineOperation({
  name: "get_project",
  method: "GET",
  path: "/projects/{project}",
  summary: "Read one project, with its OpenAPI document",
  params: ProjectParams,
  response: Project,
  errors: ["not_found"],
  hints: { readOnly: true, idempotent: true },
  cached: true,
  versioned: true,
  cli: { words: ["projects", "show"], args: ["project"] },
});

export const updateProject = defineOperation({
  name: "update_project",
  method: "PATCH",
  path: "/projects/{project}",
  summary: "Update a project's name, slug, description or OpenAPI document (null removes it)",
  params: ProjectParams,
  body: z.strictObject({
    name: ProjectName.optional(),
    slug: ProjectSlug.optional(),
    description: ProjectDescription.optional(),
    openapi: OpenApiDocument.nullable().optional().describe("An OpenAPI 3.x document of the system under test; null removes it (replaces the whole document)"),
  }),
  response: Project,
  errors: ["not_found", "conflict", "precondition_failed"],
  hints: { idempotent: true, destructive: true },
  versioned: true,
  cli: { words: ["projects", "update"], args: ["project"] },
});

export const deleteProject = defineOperation({
  name: "delete_project",
  method: "DELETE",
  path: "/projects/{project}",
  summary: "Delete a project and everything in it (owners and admins only)",
  params: ProjectParams,
  response: null,
  errors: ["not_found", "forbidden", "conflict", "precondition_failed"],
  hints: { destructive: true, idempotent: true },
  versioned: true,
  cli: { words: ["projects", "delete"], args: ["project"] },
});
