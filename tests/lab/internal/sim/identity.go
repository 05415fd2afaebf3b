package sim

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/big"
	"net"
)

// Deterministic identities: derived from a name so that a scenario without explicit identities
// gives the same UUIDs, serials and MACs on every run and every machine.

func derive(seed string) []byte {
	sum := sha256.Sum256([]byte("ichor-lab/" + seed))

	return sum[:]
}

func derivedHex(seed string, nbytes int) string {
	return hex.EncodeToString(derive(seed)[:nbytes])
}

// DerivedUUID returns a version-4-shaped UUID derived from seed.
func DerivedUUID(seed string) string {
	return formatUUID(derive(seed)[:16])
}

// RandomUUID returns a random version-4 UUID.
func RandomUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) //nolint:errcheck // crypto/rand never fails on Linux

	return formatUUID(b)
}

func formatUUID(src []byte) string {
	b := make([]byte, 16)
	copy(b, src)
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80

	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// DerivedMAC returns a locally administered unicast MAC (02:...) derived from a node name.
func DerivedMAC(name string, index int) string {
	b := derive(fmt.Sprintf("mac/%s/%d", name, index))
	mac := net.HardwareAddr{0x02, b[0], b[1], b[2], b[3], b[4]}

	return mac.String()
}

func parseMAC(s string) (net.HardwareAddr, error) {
	mac, err := net.ParseMAC(s)
	if err != nil || len(mac) != 6 {
		return nil, fmt.Errorf("invalid MAC address %q", s)
	}

	return mac, nil
}

// DerivedMemberID returns a non-zero etcd member ID derived from seed.
func DerivedMemberID(seed string) uint64 {
	v := binary.BigEndian.Uint64(derive("member/" + seed)[:8])
	if v == 0 {
		v = 1
	}

	return v
}

const base62Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewNodeID returns a random node identity as Talos makes it: base62 of 32 random bytes.
func NewNodeID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) //nolint:errcheck

	n := new(big.Int).SetBytes(b)
	base := big.NewInt(62)
	mod := new(big.Int)

	var out []byte

	for n.Sign() > 0 {
		n.DivMod(n, base, mod)
		out = append(out, base62Alphabet[mod.Int64()])
	}

	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}

	return string(out)
}
