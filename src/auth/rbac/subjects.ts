/**
 * Who a binding's subject stands for, as kube-apiserver decides it (rbac.go `appliesToUser`):
 * a `User` by name, a `Group` by one of the user's groups, a `ServiceAccount` by the user name
 * `system:serviceaccount:<namespace>:<name>` (its namespace defaulting to a RoleBinding's own; in a
 * ClusterRoleBinding a ServiceAccount without one matches nobody). Any other kind matches nobody.
 *
 * Subjects are turned into keys (`u:<user name>`, `g:<group>`) so bindings can be indexed by them:
 * a ServiceAccount subject and a User subject of the same user name get the same key.
 */
import type { RbacUser, Subject } from "./rbac-objects.ts";

export const AUTHENTICATED_GROUP = "system:authenticated";
const UNAUTHENTICATED_GROUP = "system:unauthenticated";
const SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:";

/**
 * The user as the apiserver's authenticated-group adder leaves it: `system:authenticated` added
 * unless the groups already carry it or `system:unauthenticated`.
 */
export function authenticatedUser(name: string, groups: readonly string[]): RbacUser {
  if (groups.includes(AUTHENTICATED_GROUP) || groups.includes(UNAUTHENTICATED_GROUP)) return { name, groups: [...groups] };
  return { name, groups: [...groups, AUTHENTICATED_GROUP] };
}

export function serviceAccountUserName(namespace: string, name: string): string {
  return `${SERVICE_ACCOUNT_PREFIX}${namespace}:${name}`;
}

/** The index key a subject matches, or undefined if it can match nobody. `bindingNamespace` is "" for a ClusterRoleBinding. */
export function subjectKey(subject: Subject, bindingNamespace: string): string | undefined {
  switch (subject.kind) {
    case "User":
      return userKey(subject.name);
    case "Group":
      return groupKey(subject.name);
    case "ServiceAccount": {
      const namespace = subject.namespace || bindingNamespace;
      return namespace ? userKey(serviceAccountUserName(namespace, subject.name)) : undefined;
    }
    default:
      return undefined;
  }
}

/** Every key a user matches: its name and each of its groups. */
export function userKeys(user: RbacUser): string[] {
  return [userKey(user.name), ...user.groups.map(groupKey)];
}

function userKey(name: string): string {
  return `u:${name}`;
}

function groupKey(name: string): string {
  return `g:${name}`;
}

/** kube-apiserver's `describeSubject`, for reasons. */
export function describeSubject(subject: Subject, bindingNamespace: string): string {
  if (subject.kind === "ServiceAccount") {
    return `${subject.kind} ${JSON.stringify(`${subject.name}/${subject.namespace || bindingNamespace}`)}`;
  }
  return `${subject.kind} ${JSON.stringify(subject.name)}`;
}
