#pragma once
//! Host/device qualifiers: headers included by both g++ and nvcc use these instead of __host__ etc.

#if defined(__CUDACC__)
#define NF_HD __host__ __device__
#define NF_INLINE __forceinline__
#else
#define NF_HD
#define NF_INLINE inline
#endif
