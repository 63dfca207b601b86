// The metadata a run started from CI carries without being told: commit, branch, build URL and pull/merge request
// from the variables GitHub Actions, GitLab CI and Jenkins set (`--no-ci-metadata` leaves it out).
type Env = Record<string, string | undefined>;

const present = (v: string | undefined): v is string => v !== undefined && v.trim() !== "";

function clean(m: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(m)
      .filter((e): e is [string, string] => present(e[1]))
      .map(([k, v]) => [k, v.slice(0, 1000)]),
  );
}

export function ciMetadata(env: Env): Record<string, string> {
  if (env.GITHUB_ACTIONS === "true") {
    const pr = /^refs\/pull\/(\d+)\//.exec(env.GITHUB_REF ?? "")?.[1];
    const url = present(env.GITHUB_SERVER_URL) && present(env.GITHUB_REPOSITORY) && present(env.GITHUB_RUN_ID);
    return clean({
      ci: "github-actions",
      commit: env.GITHUB_SHA,
      branch: present(env.GITHUB_HEAD_REF) ? env.GITHUB_HEAD_REF : env.GITHUB_REF_NAME,
      build_url: url ? `${env.GITHUB_SERVER_URL}/${env.GITHUB_REPOSITORY}/actions/runs/${env.GITHUB_RUN_ID}` : undefined,
      pr,
    });
  }
  if (env.GITLAB_CI === "true") {
    return clean({
      ci: "gitlab-ci",
      commit: env.CI_COMMIT_SHA,
      branch: present(env.CI_MERGE_REQUEST_SOURCE_BRANCH_NAME) ? env.CI_MERGE_REQUEST_SOURCE_BRANCH_NAME : env.CI_COMMIT_REF_NAME,
      build_url: present(env.CI_JOB_URL) ? env.CI_JOB_URL : env.CI_PIPELINE_URL,
      pr: env.CI_MERGE_REQUEST_IID,
    });
  }
  if (present(env.JENKINS_URL)) {
    return clean({
      ci: "jenkins",
      commit: env.GIT_COMMIT,
      branch: present(env.CHANGE_BRANCH) ? env.CHANGE_BRANCH : present(env.BRANCH_NAME) ? env.BRANCH_NAME : env.GIT_BRANCH?.replace(/^origin\//, ""),
      build_url: env.BUILD_URL,
      pr: env.CHANGE_ID,
    });
  }
  return {};
}
