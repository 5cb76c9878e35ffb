// Command validate decodes Kubernetes manifests strictly into the published API types (KEDA's for
// ScaledObject), so that a misspelt or misplaced field fails instead of being silently dropped by a
// cluster:
//
//	go run ./deploy/validate FILE.yaml...
//
// Each file may hold several documents separated by "---". Exit status 1 names every problem.
package main

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	kedav1alpha1 "github.com/kedacore/keda/v2/apis/keda/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// The kinds the deployment uses, by apiVersion and kind.
var kinds = map[string]func() any{
	"apps/v1/Deployment":                     func() any { return &appsv1.Deployment{} },
	"v1/Service":                             func() any { return &corev1.Service{} },
	"v1/ConfigMap":                           func() any { return &corev1.ConfigMap{} },
	"v1/Secret":                              func() any { return &corev1.Secret{} },
	"autoscaling/v2/HorizontalPodAutoscaler": func() any { return &autoscalingv2.HorizontalPodAutoscaler{} },
	"keda.sh/v1alpha1/ScaledObject":          func() any { return &kedav1alpha1.ScaledObject{} },
}

var separator = regexp.MustCompile(`(?m)^---\s*$`)

func validate(path string) []string {
	text, err := os.ReadFile(path)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	for i, doc := range separator.Split(string(text), -1) {
		if len(bytes.TrimSpace([]byte(doc))) == 0 {
			continue
		}
		where := fmt.Sprintf("%s, document %d", path, i+1)
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", where, err))
			continue
		}
		newObject, known := kinds[meta.APIVersion+"/"+meta.Kind]
		if !known {
			problems = append(problems, fmt.Sprintf("%s: unknown kind %s %s", where, meta.APIVersion, meta.Kind))
			continue
		}
		object := newObject()
		if err := yaml.UnmarshalStrict([]byte(doc), object); err != nil {
			problems = append(problems, fmt.Sprintf("%s (%s): %v", where, meta.Kind, err))
			continue
		}
		problems = append(problems, check(where, object)...)
	}
	return problems
}

// An accelerator is an extended resource: a cluster schedules it only from limits, never overcommitted.
var limitedOnly = []corev1.ResourceName{"nvidia.com/gpu"}

// What strict decoding cannot see.
func check(where string, object any) []string {
	switch o := object.(type) {
	case *appsv1.Deployment:
		return checkDeployment(where, o)
	case *kedav1alpha1.ScaledObject:
		return checkScaledObject(where, o)
	}
	return nil
}

// Every container of a Deployment is probed and bounded.
func checkDeployment(where string, deployment *appsv1.Deployment) []string {
	var problems []string
	for _, c := range deployment.Spec.Template.Spec.Containers {
		if c.Image == "" {
			problems = append(problems, fmt.Sprintf("%s: container %s has no image", where, c.Name))
		}
		if c.Resources.Requests == nil || c.Resources.Limits == nil {
			problems = append(problems, fmt.Sprintf("%s: container %s needs resource requests and limits", where, c.Name))
		}
		if c.LivenessProbe == nil {
			problems = append(problems, fmt.Sprintf("%s: container %s has no liveness probe", where, c.Name))
		}
		for _, name := range limitedOnly {
			request, requested := c.Resources.Requests[name]
			limit, limited := c.Resources.Limits[name]
			if requested && (!limited || !request.Equal(limit)) {
				problems = append(problems, fmt.Sprintf("%s: container %s asks for %s: it belongs in limits (a request equal to the limit, if any)", where, c.Name, name))
			}
		}
	}
	return problems
}

// A trigger's metadata is a map of strings, which strict decoding cannot check. These are the keys
// that KEDA v2.21's scalers read (the `keda:"name=..."` tags in its pkg/scalers) for the trigger
// types the deployment uses; KEDA itself only logs an unknown one. Update them with the module.
var triggerKeys = map[string][]string{
	"prometheus": {"serverAddress", "query", "queryParameters", "threshold", "activationThreshold",
		"namespace", "customHeaders", "ignoreNullValues", "unsafeSsl", "awsRegion", "timeout",
		"identityOwner", "authModes", "authMode", "apiKey", "method", "keyParamName"},
	"redis-streams": {"address", "addresses", "host", "hosts", "port", "ports", "username", "password",
		"stream", "consumerGroup", "pendingEntriesCount", "streamLength", "lagCount",
		"activationLagCount", "databaseIndex", "enableTLS", "unsafeSsl"},
}

// Every trigger metadata key is one its scaler reads, or that key + "FromEnv" (naming an env
// variable of the scaled container).
func checkScaledObject(where string, scaled *kedav1alpha1.ScaledObject) []string {
	var problems []string
	for _, trigger := range scaled.Spec.Triggers {
		known, listed := triggerKeys[trigger.Type]
		if !listed {
			continue
		}
		for _, key := range slices.Sorted(maps.Keys(trigger.Metadata)) {
			if !slices.Contains(known, strings.TrimSuffix(key, "FromEnv")) {
				problems = append(problems, fmt.Sprintf("%s: %s trigger has unknown metadata %q", where, trigger.Type, key))
			}
		}
	}
	return problems
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: validate FILE.yaml...")
		os.Exit(2)
	}
	var problems []string
	for _, path := range os.Args[1:] {
		problems = append(problems, validate(path)...)
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
	fmt.Printf("%d files decode strictly\n", len(os.Args)-1)
}
