// The sibling layer the planted violation reaches across to.
#pragma once
