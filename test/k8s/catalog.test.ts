import { describe, expect, it } from "vitest";
import { meantBuiltIn } from "../../src/k8s/catalog.ts";

describe("meantBuiltIn", () => {
  it.each([
    ["deployments", "deployments.apps"],
    ["deployment", "deployments.apps"],
    ["deploy", "deployments.apps"],
    ["Deployment", "deployments.apps"],
    ["deployment.apps", "deployments.apps"],
    ["pod", "pods"],
    ["po", "pods"],
    ["Pods", "pods"],
    ["ingress", "ingresses.networking.k8s.io"],
    ["crd", "customresourcedefinitions.apiextensions.k8s.io"],
    ["ev", "events"], // core and events.k8s.io share it: kubectl prefers the core group
    ["event.events.k8s.io", "events.events.k8s.io"],
  ])("resolves %s to %s as kubectl does", (name, meant) => {
    expect(meantBuiltIn(name)).toBe(meant);
  });

  it.each([
    "pods", // exact already
    "deployments.apps",
    "widgets.example.com", // a custom resource
    "pods.example.com", // a custom resource that shares a built-in's plural
    "deploy.example.com",
    "constructor", // an Object.prototype member is no entry
  ])("leaves %s alone", (name) => {
    expect(meantBuiltIn(name)).toBeUndefined();
  });
});
