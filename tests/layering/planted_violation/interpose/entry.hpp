// The layer the planted violation reaches up to.
#pragma once
