#pragma once
// porta: build an op graph once, compile it for any device, run it.
#include "porta/autodiff.hpp"
#include "porta/device.hpp"
#include "porta/dtype.hpp"
#include "porta/error.hpp"
#include "porta/executable.hpp"
#include "porta/graph.hpp"
#include "porta/models.hpp"
#include "porta/ops.hpp"
#include "porta/tensor.hpp"
