package fastpath

import (
	"bytes"

	"google.golang.org/protobuf/encoding/protowire"
)

// protobufMagic starts every Kubernetes protobuf encoding: the envelope
// (runtime.Unknown) follows it.
var protobufMagic = []byte("k8s\x00")

// The field numbers this file walks through, from k8s.io/apimachinery's
// generated.proto: runtime.Unknown's typeMeta and raw, TypeMeta's
// apiVersion and kind, the object's metadata (1 in every kind of
// k8s.io/api), and ObjectMeta's resourceVersion.
const (
	unknownTypeMeta     = 1
	unknownRaw          = 2
	typeMetaVersion     = 1
	typeMetaKind        = 2
	objectMetadata      = 1
	metaResourceVersion = 6
)

// StoredObject is the protobuf encoding of an object as the store wrote
// it, without a resourceVersion, taken apart where one goes in.
type StoredObject struct {
	data []byte
	// APIVersion and Kind are the envelope's.
	APIVersion, Kind string
	// Offsets into data: the raw length's varint [rawLen, raw), the
	// metadata length's varint [metaLen, meta), the empty resourceVersion
	// field [rv, rv+2), and the ends of metadata and raw.
	rawLen, raw, rawEnd, metaLen, meta, metaEnd, rv int
}

// ParseStored takes apart data, a Kubernetes protobuf encoding whose
// object's metadata.resourceVersion is empty, as the generated marshalling
// code writes it (it writes every string field, empty or not). ok is false
// when data is anything else: JSON, another layout, a resourceVersion set.
func ParseStored(data []byte) (s StoredObject, ok bool) {
	if !bytes.HasPrefix(data, protobufMagic) {
		return s, false
	}
	s.data = data
	off := len(protobufMagic)
	// The envelope: typeMeta, raw, contentEncoding, contentType.
	for off < len(data) {
		num, typ, n := protowire.ConsumeTag(data[off:])
		if n < 0 {
			return s, false
		}
		field := off + n
		if typ != protowire.BytesType {
			m := protowire.ConsumeFieldValue(num, typ, data[field:])
			if m < 0 {
				return s, false
			}
			off = field + m
			continue
		}
		v, m := protowire.ConsumeBytes(data[field:])
		if m < 0 {
			return s, false
		}
		start, end := field+m-len(v), field+m
		switch num {
		case unknownTypeMeta:
			if !s.typeMeta(v) {
				return s, false
			}
		case unknownRaw:
			if s.raw != 0 {
				return s, false
			}
			s.rawLen, s.raw, s.rawEnd = field, start, end
			if !s.object() {
				return s, false
			}
		}
		off = end
	}
	return s, s.raw != 0 && s.Kind != ""
}

func (s *StoredObject) typeMeta(b []byte) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		if typ != protowire.BytesType {
			m := protowire.ConsumeFieldValue(num, typ, b[n:])
			if m < 0 {
				return false
			}
			b = b[n+m:]
			continue
		}
		v, m := protowire.ConsumeBytes(b[n:])
		if m < 0 {
			return false
		}
		switch num {
		case typeMetaVersion:
			s.APIVersion = string(v)
		case typeMetaKind:
			s.Kind = string(v)
		}
		b = b[n+m:]
	}
	return true
}

// object finds the metadata in raw, and the empty resourceVersion in it.
func (s *StoredObject) object() bool {
	off := s.raw
	for off < s.rawEnd {
		num, typ, n := protowire.ConsumeTag(s.data[off:s.rawEnd])
		if n < 0 {
			return false
		}
		field := off + n
		m := protowire.ConsumeFieldValue(num, typ, s.data[field:s.rawEnd])
		if m < 0 {
			return false
		}
		if num == objectMetadata {
			if typ != protowire.BytesType || s.meta != 0 {
				return false
			}
			v, _ := protowire.ConsumeBytes(s.data[field:s.rawEnd])
			s.metaLen, s.meta, s.metaEnd = field, field+m-len(v), field+m
			if !s.metadata() {
				return false
			}
		}
		off = field + m
	}
	return s.meta != 0
}

func (s *StoredObject) metadata() bool {
	off := s.meta
	for off < s.metaEnd {
		num, typ, n := protowire.ConsumeTag(s.data[off:s.metaEnd])
		if n < 0 {
			return false
		}
		m := protowire.ConsumeFieldValue(num, typ, s.data[off+n:s.metaEnd])
		if m < 0 {
			return false
		}
		if num == metaResourceVersion {
			// Present and empty, once: tag and a zero length.
			if typ != protowire.BytesType || m != 1 || n != 1 || s.rv != 0 {
				return false
			}
			s.rv = off
		}
		off += n + m
	}
	return s.rv != 0
}

// AppendWithResourceVersion appends to dst the encoding with
// metadata.resourceVersion set to rv: the bytes the protobuf serializer
// writes for the object once its resourceVersion is rv (a create's answer),
// copied from the stored ones instead of encoding the object again.
func (s StoredObject) AppendWithResourceVersion(dst []byte, rv string) []byte {
	rvField := 1 + protowire.SizeVarint(uint64(len(rv))) + len(rv)
	metaSize := s.metaEnd - s.meta - 2 + rvField
	rawSize := s.rawEnd - s.raw - (s.meta - s.metaLen) - (s.metaEnd - s.meta) +
		protowire.SizeVarint(uint64(metaSize)) + metaSize
	dst = append(dst, s.data[:s.rawLen]...)
	dst = protowire.AppendVarint(dst, uint64(rawSize))
	dst = append(dst, s.data[s.raw:s.metaLen]...)
	dst = protowire.AppendVarint(dst, uint64(metaSize))
	dst = append(dst, s.data[s.meta:s.rv]...)
	dst = protowire.AppendTag(dst, metaResourceVersion, protowire.BytesType)
	dst = protowire.AppendString(dst, rv)
	dst = append(dst, s.data[s.rv+2:s.metaEnd]...)
	dst = append(dst, s.data[s.metaEnd:s.rawEnd]...)
	return append(dst, s.data[s.rawEnd:]...)
}
