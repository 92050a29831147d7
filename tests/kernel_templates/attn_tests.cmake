# decode_attention's suites (issue 6 item 5), included by this folder's CMakeLists.txt: unit (CPU
# reference by hand, spec, manifest, default space over the shape sets, the template emulated on the
# CPU), nvrtc (a sample compiles for sm_80 and sm_90), gpu (skips without a device) and the
# benchmark ktune_attn_bench.
ktune_add_gtest(NAME ktune_attn_nvrtc_tests LABEL nvrtc
  SOURCES decode_attention_nvrtc_test.cpp
  LIBS ktune_kernel_templates ktune_harness)
