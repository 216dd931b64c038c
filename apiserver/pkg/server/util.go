package server

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

type serializerInfo = runtime.Serializer

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

func schemaGR() schema.GroupResource { return schema.GroupResource{} }
