package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"skiff.dev/apiserver/pkg/testserver"
)

// keptCase is an object created through the API whose stored form differs
// from the one sent where a watch cache keeping the sent object would show
// it wrongly, if it did not first make it look as decoded.
type keptCase struct {
	path, name, body string
}

var keptCases = []keptCase{
	// rules has no omitempty: [] as sent, null as decoded from protobuf.
	{"/apis/rbac.authorization.k8s.io/v1/clusterroles", "kept-role-%d",
		`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"kept-role-%d"},"rules":[]}`},
	// A null value in a Secret's data decodes as an empty one.
	{"/api/v1/namespaces/default/secrets", "kept-secret-%d",
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"kept-secret-%d"},"data":{"k":null,"l":"eA=="}}`},
	// The claim template's apiVersion and kind are not stored.
	{"/apis/apps/v1/namespaces/default/statefulsets", "kept-sts-%d",
		`{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"kept-sts-%d"},"spec":{"serviceName":"s","selector":{"matchLabels":{"a":"b"}},` +
			`"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}},` +
			`"volumeClaimTemplates":[{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}]}}`},
	// A pod through admission: the ServiceAccount volume, tolerations.
	{"/api/v1/namespaces/default/pods", "kept-pod-%d",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"kept-pod-%d","labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i","args":[]}]}}`},
}

// jsonObject decodes a JSON object, without its kind and apiVersion (a
// list's items carry none).
func jsonObject(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	delete(m, "kind")
	delete(m, "apiVersion")
	return m
}

// cachedItem reads the object named name from a list served by the watch
// cache (resourceVersion=0), once the cache has it.
func cachedItem(t *testing.T, ts *testserver.TestServer, path, name string) map[string]any {
	t.Helper()
	var item map[string]any
	eventually(t, fmt.Sprintf("%s %s in the cache", path, name), func() error {
		code, body := raw(t, ts, "GET", path+"?resourceVersion=0", "", nil)
		if code != 200 {
			return fmt.Errorf("list %s: %d %s", path, code, body)
		}
		var list struct{ Items []json.RawMessage }
		if err := json.Unmarshal(body, &list); err != nil {
			return err
		}
		for _, raw := range list.Items {
			m := jsonObject(t, raw)
			if md, _ := m["metadata"].(map[string]any); md["name"] == name {
				item = m
				return nil
			}
		}
		return fmt.Errorf("not listed yet")
	})
	return item
}

// metricValue is the value of the sample that starts with prefix (name and
// labels) in a /metrics answer; 0 when there is none.
func metricValue(t *testing.T, metrics, prefix string) float64 {
	t.Helper()
	for _, line := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(line, prefix+" ") {
			var v float64
			if _, err := fmt.Sscan(strings.TrimPrefix(line, prefix+" "), &v); err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	return 0
}

// TestCreatedObjectsAsStored: what the watch cache serves of created
// objects (apiserver_watch_cache_events_received_total counts its events),
// as the create's answer, is what a GET decodes from etcd: empty lists
// without omitempty are null, a Secret's null value is empty, an embedded
// object's kind is gone.
func TestCreatedObjectsAsStored(t *testing.T) {
	ts := start(t, nil)
	const each = 10
	for _, c := range keptCases {
		for i := 0; i < each; i++ {
			name := fmt.Sprintf(c.name, i)
			code, created := raw(t, ts, "POST", c.path, "application/json", []byte(fmt.Sprintf(c.body, i)))
			if code != 201 {
				t.Fatalf("create %s: %d %s", name, code, created)
			}
			code, got := raw(t, ts, "GET", c.path+"/"+name, "", nil)
			if code != 200 {
				t.Fatalf("get %s: %d %s", name, code, got)
			}
			stored := jsonObject(t, got)
			if answer := jsonObject(t, created); !reflect.DeepEqual(answer, stored) {
				t.Errorf("%s: the create answered\n%s\netcd holds\n%s", name, created, got)
			}
			if cached := cachedItem(t, ts, c.path, name); !reflect.DeepEqual(cached, stored) {
				t.Errorf("%s: the watch cache serves\n%v\netcd holds\n%s", name, cached, got)
			}
		}
	}
	code, metrics := raw(t, ts, "GET", "/metrics", "", nil)
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	for _, gr := range []string{`group="rbac.authorization.k8s.io",resource="clusterroles"`, `group="",resource="secrets"`,
		`group="apps",resource="statefulsets"`, `group="",resource="pods"`} {
		if received := metricValue(t, string(metrics), "apiserver_watch_cache_events_received_total{"+gr+"}"); received < each {
			t.Errorf("%s: %v events received; want at least %d", gr, received, each)
		}
	}
}

// TestCreateAnswersAsStored: a create's protobuf answer, the decoding of
// the bytes written to etcd encoded again, is byte for byte what a GET of
// the object answers.
func TestCreateAnswersAsStored(t *testing.T) {
	ts := start(t, nil)
	const protobuf = "application/vnd.kubernetes.protobuf"
	for _, c := range keptCases {
		for i := 0; i < 3; i++ {
			name := fmt.Sprintf(c.name, i)
			code, created := rawAccept(t, ts, "POST", c.path, "application/json", protobuf, []byte(fmt.Sprintf(c.body, i)))
			if code != 201 {
				t.Fatalf("create %s: %d %s", name, code, created)
			}
			if !bytes.HasPrefix(created, []byte("k8s\x00")) {
				t.Fatalf("create %s: not a protobuf answer: %q", name, created)
			}
			code, got := rawAccept(t, ts, "GET", c.path+"/"+name, "", protobuf, nil)
			if code != 200 {
				t.Fatalf("get %s: %d %s", name, code, got)
			}
			if !bytes.Equal(created, got) {
				t.Errorf("%s: the create answered\n%q\na GET answers\n%q", name, created, got)
			}
		}
	}
}

// TestUpdateAnswersAsStored: the protobuf answers of a merge patch, a PUT, a
// server-side apply and a PUT that changes nothing (the decoding of the
// bytes the write stored, or for the last of the bytes etcd holds) are byte
// for byte what a GET answers; the PUT that changes nothing keeps the
// object's resourceVersion, as upstream's.
func TestUpdateAnswersAsStored(t *testing.T) {
	ts := start(t, nil)
	const protobuf = "application/vnd.kubernetes.protobuf"
	answersAsGet := func(what, path string, code int, answer []byte) {
		t.Helper()
		if code != 200 && code != 201 {
			t.Fatalf("%s: %d %s", what, code, answer)
		}
		if !bytes.HasPrefix(answer, []byte("k8s\x00")) {
			t.Fatalf("%s: not a protobuf answer: %q", what, answer)
		}
		code, got := rawAccept(t, ts, "GET", path, "", protobuf, nil)
		if code != 200 {
			t.Fatalf("get %s: %d %s", path, code, got)
		}
		if !bytes.Equal(answer, got) {
			t.Errorf("%s: answered\n%q\na GET answers\n%q", what, answer, got)
		}
	}
	for _, c := range keptCases {
		name := fmt.Sprintf(c.name, 0)
		path := c.path + "/" + name
		if code, body := raw(t, ts, "POST", c.path, "application/json", []byte(fmt.Sprintf(c.body, 0))); code != 201 {
			t.Fatalf("create %s: %d %s", name, code, body)
		}
		code, answer := rawAccept(t, ts, "PATCH", path, "application/merge-patch+json", protobuf,
			[]byte(`{"metadata":{"labels":{"patched":"yes"}}}`))
		answersAsGet(name+": merge patch", path, code, answer)

		code, current := raw(t, ts, "GET", path, "", nil)
		if code != 200 {
			t.Fatalf("get %s: %d %s", path, code, current)
		}
		var obj map[string]any
		if err := json.Unmarshal(current, &obj); err != nil {
			t.Fatal(err)
		}
		obj["metadata"].(map[string]any)["labels"].(map[string]any)["put"] = "yes"
		body, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		code, answer = rawAccept(t, ts, "PUT", path, "application/json", protobuf, body)
		answersAsGet(name+": PUT", path, code, answer)

		applied := fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"metadata":{"name":%q,"annotations":{"applied":"yes"}}}`, obj["apiVersion"], obj["kind"], name)
		code, answer = rawAccept(t, ts, "PATCH", path+"?fieldManager=kept-test", "application/apply-patch+yaml", protobuf, []byte(applied))
		answersAsGet(name+": apply", path, code, answer)

		code, current = raw(t, ts, "GET", path, "", nil)
		if code != 200 {
			t.Fatalf("get %s: %d %s", path, code, current)
		}
		before := jsonObject(t, current)["metadata"].(map[string]any)["resourceVersion"]
		code, answer = rawAccept(t, ts, "PUT", path, "application/json", protobuf, current)
		answersAsGet(name+": PUT that changes nothing", path, code, answer)
		code, current = raw(t, ts, "GET", path, "", nil)
		if code != 200 {
			t.Fatalf("get %s: %d %s", path, code, current)
		}
		if after := jsonObject(t, current)["metadata"].(map[string]any)["resourceVersion"]; after != before {
			t.Errorf("%s: a PUT that changes nothing moved the resourceVersion from %v to %v", name, before, after)
		}
	}
}
