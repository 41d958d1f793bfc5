"""The official Python client (python3-kubernetes) against /k8s and against the fake API server, for
test/e2e/python-client.e2e.test.ts. Usage:

    client.py lists|not-found|access|resources|watch '<targets JSON>' ['<arguments JSON>']

targets: {"edge": {"host": ".../k8s", "token": "..."}, "fake": {"host": "..."}}. `lists` and
`not-found` print one JSON document with each target's answers (`access`: whether listing every
namespace's pods — or, with {"namespace": ns}, one namespace's — is allowed, or the typed
ApiException's status and the Status it carries; `resources`:
the resource names of get_api_resources for v1 and apps/v1); `watch` (one target only) lists the
namespace, prints {"listResourceVersion": rv}, then watches from that resourceVersion and prints one
JSON line per event as it arrives, until the server ends the watch (timeout_seconds) or it is killed.
A failure anywhere leaves a traceback on stderr and a non-zero exit.
"""
import json
import sys

from kubernetes import client, watch
from kubernetes.client.rest import ApiException


def api_client(target):
    configuration = client.Configuration()
    configuration.host = target["host"]
    if target.get("token"):
        configuration.api_key = {"authorization": target["token"]}
        configuration.api_key_prefix = {"authorization": "Bearer"}
    return client.ApiClient(configuration)


def identity(obj):
    return {"namespace": obj.metadata.namespace, "name": obj.metadata.name, "resourceVersion": obj.metadata.resource_version}


def serialized(api, obj):
    """The typed model back to JSON (camelCase keys, RFC 3339 times), without metadata.managedFields."""
    data = api.sanitize_for_serialization(obj)
    data.get("metadata", {}).pop("managedFields", None)
    return data


def describe_list(api, answer):
    return {
        "type": type(answer).__name__,
        "itemTypes": sorted({type(item).__name__ for item in answer.items}),
        "resourceVersion": answer.metadata.resource_version,
        "items": [identity(item) for item in answer.items],
        "objects": [serialized(api, item) for item in answer.items],
    }


def lists(target, args):
    api = api_client(target)
    core = client.CoreV1Api(api)
    apps = client.AppsV1Api(api)
    selected = {
        f"{ns} {selector}": describe_list(api, core.list_namespaced_pod(ns, label_selector=selector))
        for ns, selector in args["selectors"]
    }
    reads = {}
    for ns, name in args["reads"]:
        pod = core.read_namespaced_pod(name, ns)
        started = [s.state.running.started_at for s in pod.status.container_statuses or [] if s.state and s.state.running]
        reads[f"{ns}/{name}"] = {
            "type": type(pod).__name__,
            "identity": identity(pod),
            # Nested models and times deserialize to their Python types.
            "containerStatusTypes": sorted({type(s).__name__ for s in pod.status.container_statuses or []}),
            "startedAtTypes": sorted({type(t).__name__ for t in started}),
            "object": serialized(api, pod),
        }
    return {
        "podsAllNamespaces": describe_list(api, core.list_pod_for_all_namespaces()),
        "podsBySelector": selected,
        "reads": reads,
        "deploymentsAllNamespaces": describe_list(api, apps.list_deployment_for_all_namespaces()),
    }


def not_found(target, args):
    core = client.CoreV1Api(api_client(target))
    try:
        pod = core.read_namespaced_pod(args["name"], args["namespace"])
    except ApiException as error:
        return {"raised": type(error).__name__, "status": error.status, "reason": error.reason, "body": json.loads(error.body)}
    return {"raised": None, "pod": identity(pod)}


def access(target, args):
    core = client.CoreV1Api(api_client(target))
    try:
        pods = core.list_namespaced_pod(args["namespace"]) if args.get("namespace") else core.list_pod_for_all_namespaces()
    except ApiException as error:
        return {"raised": type(error).__name__, "status": error.status, "body": json.loads(error.body)}
    return {"raised": None, "type": type(pods).__name__, "items": sorted(identity(pod)["name"] for pod in pods.items)}


def resources(target, args):
    """get_api_resources of the core and apps group versions: the client asks `/api/v1/` (trailing slash)."""
    api = api_client(target)
    core = client.CoreV1Api(api).get_api_resources()
    apps = client.AppsV1Api(api).get_api_resources()
    return {"core": sorted(r.name for r in core.resources), "apps": sorted(r.name for r in apps.resources)}


def watch_namespace(target, args):
    core = client.CoreV1Api(api_client(target))
    namespace = args["namespace"]
    listed = core.list_namespaced_pod(namespace)
    print(json.dumps({"listResourceVersion": listed.metadata.resource_version, "items": [identity(i) for i in listed.items]}), flush=True)
    stream = watch.Watch().stream(core.list_namespaced_pod, namespace, resource_version=listed.metadata.resource_version, timeout_seconds=args["timeoutSeconds"])
    for event in stream:
        pod = event["object"]
        print(json.dumps({
            "type": event["type"],
            "objectType": type(pod).__name__,
            "name": pod.metadata.name,
            "resourceVersion": pod.metadata.resource_version,
            "phase": str(pod.status.phase if pod.status else None),
        }), flush=True)
    print(json.dumps({"end": True}), flush=True)


def main():
    command, targets = sys.argv[1], json.loads(sys.argv[2])
    args = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    if command == "watch":
        (target,) = targets.values()
        watch_namespace(target, args)
        return
    run = {"lists": lists, "not-found": not_found, "access": access, "resources": resources}[command]
    print(json.dumps({label: run(target, args) for label, target in targets.items()}))


if __name__ == "__main__":
    main()
