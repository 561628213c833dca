#pragma once
//! The device side of the halo exchange: packing bodies for a peer and adding the counterforces
//! a peer sends back. Both run on the current device's default stream, behind the kernels.

#include <cstddef>
#include <cstdint>

namespace nf {

//! out[k] = records[index[k]] for k < count; records are `record_bytes` long (16 or 32: a
//! Body<float> or Body<double>).
void gather_records(const void* records, std::size_t record_bytes, const std::uint32_t* index, std::size_t count,
                    void* out);

//! acc[index[k]] += in[k] (x, y, z) for k < count, over Acc4<double> when `double_precision`,
//! else Acc4<float>. Indices are distinct, so plain adds suffice.
void add_accelerations(void* acc, bool double_precision, const std::uint32_t* index, std::size_t count,
                       const void* in);

}  // namespace nf
