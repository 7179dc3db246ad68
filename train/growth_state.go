package train

import (
	"fmt"

	"github.com/gpzoo/gpzoo/graph"
)

var _ Stateful = (*BasisGrowth)(nil)

// growthState is what a checkpoint keeps of a BasisGrowth: the steps seen and the active counts. The
// construction values of L_B are not saved: NewBasisGrowth rebuilds them from the same initial Params.
type growthState struct{ T, Ka, Kb int }

// MarshalState encodes the steps seen and the numbers of active bases (Stateful).
func (h *BasisGrowth) MarshalState([]*graph.Param) ([]byte, error) {
	return EncodeState("BasisGrowth", growthState{T: h.t, Ka: h.ka, Kb: h.kb})
}

// UnmarshalState restores the state MarshalState encoded (Stateful). It fails, leaving the hook unchanged, on
// undecodable data or counts outside 0..Mα, 0..Mβ.
func (h *BasisGrowth) UnmarshalState(_ []*graph.Param, data []byte) error {
	var st growthState
	if err := DecodeState("BasisGrowth", data, &st); err != nil {
		return err
	}
	if st.T < 0 || st.Ka < 0 || st.Ka > h.ma || st.Kb < 0 || st.Kb > h.mb {
		return fmt.Errorf("train: BasisGrowth: saved state %+v outside this hook's Mα=%d, Mβ=%d", st, h.ma, h.mb)
	}
	h.t, h.ka, h.kb = st.T, st.Ka, st.Kb
	return nil
}
