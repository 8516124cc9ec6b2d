"""An advantage actor-critic with rlax's losses (policy_gradients.policy_gradient_loss, entropy_loss,
distributions.softmax, base.batched_index, value_learning.td_lambda), transcribed small."""

import jax
import jax.numpy as jnp


def batched_index(values, indices, keepdims=False):
  indices = jnp.asarray(indices)
  one_hot_indices = jax.nn.one_hot(indices, values.shape[-1], dtype=values.dtype)
  return jnp.sum(values * one_hot_indices, axis=-1, keepdims=keepdims)


def softmax_logprob(sample, logits, temperature=1.):
  logprobs = jax.nn.log_softmax(logits / temperature)
  return batched_index(logprobs, sample)


def softmax_entropy(logits, temperature=1.):
  probs = jax.nn.softmax(logits / temperature)
  logprobs = jax.nn.log_softmax(logits / temperature)
  return -jnp.nansum(probs * logprobs, axis=-1)


def policy_gradient_loss(logits_t, a_t, adv_t, w_t, use_stop_gradient=True):
  log_pi_a_t = softmax_logprob(a_t, logits_t)
  adv_t = jax.lax.select(use_stop_gradient, jax.lax.stop_gradient(adv_t), adv_t)
  loss_per_timestep = -log_pi_a_t * adv_t
  return jnp.mean(loss_per_timestep * w_t)


def entropy_loss(logits_t, w_t):
  entropy_per_timestep = softmax_entropy(logits_t)
  return -jnp.mean(entropy_per_timestep * w_t)


def lambda_returns(r_t, discount_t, v_t, lambda_=1., stop_target_gradients=False):
  lambda_ = jnp.ones_like(discount_t) * lambda_

  def _body(acc, xs):
    returns, discounts, values, lambda_ = xs
    acc = returns + discounts * ((1-lambda_) * values + lambda_ * acc)
    return acc, acc

  _, returns = jax.lax.scan(
      _body, v_t[-1], (r_t, discount_t, v_t, lambda_), reverse=True)
  return jax.lax.select(stop_target_gradients, jax.lax.stop_gradient(returns), returns)


def td_lambda(v_tm1, r_t, discount_t, v_t, lambda_, stop_target_gradients=True):
  target_tm1 = lambda_returns(r_t, discount_t, v_t, lambda_, stop_target_gradients)
  return target_tm1 - v_tm1


def network(params, obs):
  h = jax.nn.relu(obs @ params["torso"])
  return h @ params["policy"], jnp.squeeze(h @ params["value"], -1)


def a2c_loss(params, observations, actions, rewards, discounts, entropy_cost=0.01, baseline_cost=0.5):
  logits, values = network(params, observations)
  td_errors = td_lambda(v_tm1=values[:-1], r_t=rewards, discount_t=discounts, v_t=values[1:], lambda_=0.9)
  critic_loss = jnp.mean(td_errors**2)
  actor_loss = policy_gradient_loss(logits_t=logits[:-1], a_t=actions, adv_t=td_errors,
                                    w_t=jnp.ones_like(td_errors))
  entropy = entropy_loss(logits[:-1], jnp.ones_like(td_errors))
  return actor_loss + baseline_cost * critic_loss + entropy_cost * entropy


def example():
  k = jax.random.split(jax.random.PRNGKey(4), 5)
  params = {"torso": jax.random.normal(k[0], (3, 4)), "policy": jax.random.normal(k[1], (4, 3)) * 0.5,
            "value": jax.random.normal(k[2], (4, 1)) * 0.5}
  observations = jax.random.normal(k[3], (5, 3))
  return params, observations, jnp.array([0, 2, 1, 1]), jax.random.normal(k[4], (4,)), jnp.array([0.99, 0.99, 0.0, 0.99])
