/*
 * binding_rules.c - the one table of base values for symbolic dims and
 * configuring scalar inputs (see binding.h).
 *
 * Which kind a dim is comes from its input's role (roles.c):
 *
 *   role            axes (symbolic ones only)             example
 *   image NCHW      0 batch, 2-3 spatial                  x[N,3,H,W]
 *   image NHWC      0 batch, 1-2 spatial                  x[N,H,W,3]
 *   audio           last samples, 0 batch (rank 2-3)      input[batch,samples]
 *   token ids/mask  0 batch (rank >= 2), others sequence  input_ids[batch,seq]
 *   state           all state                             state[2,batch,128]
 *   lengths         0 batch                               lengths[batch]
 *   other           0 batch (rank >= 2), others by name   (seq/len/time -> sequence,
 *                   (batch* / N -> batch everywhere)        height/width -> spatial,
 *                                                           sample -> samples, else other)
 *
 * A name used by several inputs takes the kind of the first that gives it
 * one other than state/other (input order), so Silero's "batch" is a batch
 * from its audio input even though its state input names it too.
 *
 * Why these values:
 * - batch 1: one example, what inference servers see; never searched (a
 *   model that needs another batch says so in its file).
 * - spatial 224: the ImageNet crop every classifier since AlexNet takes; a
 *   multiple of 32, the stride of common backbones (roles.c rounds it up to
 *   the graph's own stride when that does not divide it).  Alternatives:
 *   the other common crops, small ones first for OCR/detection heads.
 * - sequence 128: the usual fine-tuning length of BERT-style encoders;
 *   except the axis a lengths input describes when the graph compares it
 *   with a constant arange of n (runtime/inputs.c's rule table): torch's
 *   tracer bakes arange(max(lengths)) at its example's length, so n is the
 *   only length such a model (a Conformer) runs at, and the axis starts at n.
 * - samples 16000: one second at 16 kHz, the rate of speech models (VAD,
 *   wake words, ASR front ends); alternatives: the chunk sizes such models
 *   stream (256/512 at 8/16 kHz, openWakeWord's 1280) and 0.5 s / 2 s.
 * - state 1: the batch of a recurrent state; its hidden size is known.
 * - other 1: what passnet always assumed; alternatives up to 128.
 * - a sample rate 'sr' 16000 (Silero checks 16000 or 8000), a number of
 *   steps 10.
 *
 * The shape variants' ladder (variants.h), one value per slot:
 * - batch 1 to 512 by powers of two, as the published benchmark reifies
 *   vision batches; next to another varying kind (sequence, spatial,
 *   samples) the paired ladder 1..16, so that the product stays what a
 *   serving system sees ((1,16) to (16,4096) for text);
 * - spatial 128 to 640, the image sizes classifiers and detectors are run
 *   at (rounded up to the graph's stride, as the base is);
 * - sequence 16 to 4096, short prompts to long contexts;
 * - samples 512 (a VAD chunk) to 64000 (4 s at 16 kHz);
 * - state and other stay at the base: a recurrent state's size and a dim
 *   passnet cannot name are the model's, not the input's.
 */
#include "extract/binding.h"

const pn_bind_rule pn_dim_rules[PN_N_DIM_KINDS] = {
	[PN_DK_BATCH] = {"batch", 1, 0, {0}},
	[PN_DK_SPATIAL] = {"spatial", 224, 12, {32, 48, 64, 96, 128, 160, 192, 256, 320, 384, 448, 512}},
	[PN_DK_SEQUENCE] = {"sequence", 128, 8, {1, 8, 16, 32, 64, 77, 256, 512}},
	[PN_DK_SAMPLES] = {"samples", 16000, 9, {256, 512, 1024, 1280, 1536, 4000, 8000, 32000, 48000}},
	[PN_DK_STATE] = {"state", 1, 0, {0}},
	[PN_DK_OTHER] = {"other", 1, 7, {2, 4, 8, 16, 32, 64, 128}},
};

const pn_scalar_rule pn_scalar_rules[] = {
	{"sr|sample_rate|sampling_rate|samplerate|rate", {"sample rate", 16000, 4, {8000, 22050, 44100, 48000}}},
	{"steps|num_steps|n_steps|nsteps|iterations|num_iterations", {"steps", 10, 2, {1, 4}}},
};

const int pn_n_scalar_rules = (int)(sizeof pn_scalar_rules / sizeof pn_scalar_rules[0]);

const int64_t pn_variant_ladder[PN_N_DIM_KINDS][PN_VARIANT_SLOTS] = {
	[PN_DK_BATCH] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512},
	[PN_DK_SPATIAL] = {128, 160, 192, 224, 256, 320, 384, 448, 512, 640},
	[PN_DK_SEQUENCE] = {16, 32, 64, 128, 256, 512, 1024, 2048, 3072, 4096},
	[PN_DK_SAMPLES] = {512, 1024, 1536, 4000, 8000, 16000, 24000, 32000, 48000, 64000},
	[PN_DK_STATE] = {0},
	[PN_DK_OTHER] = {0},
};

const int64_t pn_variant_paired_batch[PN_VARIANT_SLOTS] = {1, 1, 2, 2, 4, 4, 8, 8, 16, 16};
