package celpolicy

import (
	"context"
	"strings"
	"testing"
)

func TestCompile(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		expr    string
		kind    Kind
		wantErr string
	}{
		{name: "bool", expr: "object.spec.replicas <= 5", kind: Validation},
		{name: "syntax error", expr: "object.spec.replicas <=", kind: Validation, wantErr: "compilation failed: ERROR: <input>:1:"},
		{name: "undeclared variable", expr: "obj.spec == 1", kind: Validation, wantErr: "undeclared reference to 'obj'"},
		{name: "validation must be bool", expr: "'a'", kind: Validation, wantErr: "must evaluate to bool"},
		{name: "message must be string", expr: "1", kind: Message, wantErr: "must evaluate to string"},
		{name: "audit annotation may be null", expr: "null", kind: AuditAnnotation},
		{name: "variable any type", expr: "[1, 2]", kind: Variable},
		{name: "strings ext", expr: "'a,b'.split(',').size() == 2", kind: Validation},
		{name: "sets ext", expr: "sets.contains([1, 2, 3], [2])", kind: Validation},
		{name: "lists ext", expr: "[3, 1].sort() == [1, 3]", kind: Validation},
		{name: "math ext", expr: "math.greatest(1, 2) == 2", kind: Validation},
		{name: "encoders ext", expr: "base64.encode(b'hi') == 'aGk='", kind: Validation},
		{name: "kubernetes quantity library", expr: "quantity('1Gi').isGreaterThan(quantity('1Mi'))", kind: Validation},
		{name: "kubernetes url, ip and cidr libraries", expr: "isURL('https://a.b') && ip('10.0.0.1').family() == 4 && cidr('10.0.0.0/8').containsIP('10.1.2.3')", kind: Validation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := env.Compile(tt.expr, tt.kind)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestEval(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"spec": map[string]any{"replicas": int64(3)}, "metadata": map[string]any{"name": "web"}}
	tests := []struct {
		name    string
		expr    string
		act     Activation
		want    bool
		wantErr string
	}{
		{name: "true", expr: "object.spec.replicas <= 5", act: Activation{Object: obj}, want: true},
		{name: "false", expr: "object.spec.replicas > 5", act: Activation{Object: obj}, want: false},
		{name: "null object on create", expr: "oldObject == null", act: Activation{Object: obj}, want: true},
		{name: "has on a missing field", expr: "!has(object.spec.paused)", act: Activation{Object: obj}, want: true},
		{name: "missing key errors", expr: "object.spec.paused", act: Activation{Object: obj}, wantErr: "expression 'object.spec.paused' resulted in error: no such key: paused"},
		{name: "params", expr: "object.spec.replicas <= int(params.max)", act: Activation{Object: obj, Params: map[string]any{"max": "2"}}, want: false},
		{name: "null params", expr: "params == null", act: Activation{Object: obj}, want: true},
		{name: "runtime cost limit", expr: "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, [1,2,3,4,5,6,7,8,9,10].all(g, true)))))))",
			wantErr: "operation cancelled: actual cost limit exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prg, err := env.Compile(tt.expr, Validation)
			if err != nil {
				t.Fatal(err)
			}
			got, err := prg.EvalBool(context.Background(), &tt.act)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEvalVariables(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	compile := func(expr string, kind Kind) *Program {
		p, err := env.Compile(expr, kind)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	act := &Activation{Object: map[string]any{"spec": map[string]any{"replicas": int64(7)}}}
	EvalVariables(context.Background(), []NamedProgram{
		{Name: "replicas", Program: compile("object.spec.replicas", Variable)},
		{Name: "double", Program: compile("variables.replicas * 2", Variable)},
		{Name: "broken", Program: compile("object.spec.nothing", Variable)},
	}, act)
	ok, err := compile("variables.double == 14", Validation).EvalBool(context.Background(), act)
	if err != nil || !ok {
		t.Errorf("a variable reading an earlier one: %v, %v", ok, err)
	}
	// A broken variable fails only the expressions that read it.
	if _, err := compile("variables.broken == 1", Validation).EvalBool(context.Background(), act); err == nil || !strings.Contains(err.Error(), `composited variable "broken" fails to be evaluated`) {
		t.Errorf("reading a broken variable: %v", err)
	}
	if ok, err := compile("variables.replicas == 7", Validation).EvalBool(context.Background(), act); err != nil || !ok {
		t.Errorf("an unrelated expression: %v, %v", ok, err)
	}
}
