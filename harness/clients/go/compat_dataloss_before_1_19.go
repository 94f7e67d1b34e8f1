//go:build kgo_before_1_19

package main

import "github.com/twmb/franz-go/pkg/kgo"

// lossEpochs: kgo before v1.19.0 names no epochs in ErrDataLoss, so the event carries none (null):
// what the client reported, nothing made up.
func lossEpochs(*kgo.ErrDataLoss) (resetTo, consumedTo any) {
	return nil, nil
}
