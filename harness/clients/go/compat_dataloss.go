//go:build !kgo_before_1_19

package main

import "github.com/twmb/franz-go/pkg/kgo"

// lossEpochs: the leader epochs kgo's ErrDataLoss names (v1.19.0 and later), of the offset it reset to
// and of the offset it had consumed to.
func lossEpochs(loss *kgo.ErrDataLoss) (resetTo, consumedTo any) {
	return loss.ResetToEpoch, loss.ConsumedToEpoch
}
