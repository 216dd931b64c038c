package netsafety

import (
	"encoding/binary"
	"net"
)

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// ipv4UDP builds an IPv4 header (with checksum) and an 8-byte UDP header
// without payload.
func ipv4UDP(src, dst net.IP) []byte {
	b := make([]byte, 28)
	b[0] = 0x45
	binary.BigEndian.PutUint16(b[2:], 28)
	b[8] = 64
	b[9] = 17
	copy(b[12:16], src)
	copy(b[16:20], dst)
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	binary.BigEndian.PutUint16(b[10:], ^uint16(sum))
	binary.BigEndian.PutUint16(b[20:], 40000)
	binary.BigEndian.PutUint16(b[22:], 9)
	binary.BigEndian.PutUint16(b[24:], 8)
	return b
}
