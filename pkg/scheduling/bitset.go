package scheduling

import "math/bits"

// bitset is a set of instance-type positions (positions in price order).
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) set(i int)      { b[i/64] |= 1 << (uint(i) % 64) }
func (b bitset) has(i int) bool { return b[i/64]&(1<<(uint(i)%64)) != 0 }
func (b bitset) unset(i int)    { b[i/64] &^= 1 << (uint(i) % 64) }

func (b bitset) empty() bool {
	for _, w := range b {
		if w != 0 {
			return false
		}
	}
	return true
}

// each calls f for every member in ascending order until f returns false.
func (b bitset) each(f func(i int) bool) {
	for wi, w := range b {
		for w != 0 {
			t := bits.TrailingZeros64(w)
			if !f(wi*64 + t) {
				return
			}
			w &= w - 1
		}
	}
}
